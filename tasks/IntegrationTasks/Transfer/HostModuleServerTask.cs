using IntegrationTasks.Data;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Transfer;

/// <summary>
/// A server built on ASP.NET Core (HTTP records; SOAP and gRPC next). ASP.NET Core cannot load inside
/// MSBuild's process, so the task runs the suite's one host process (IntegrationTasks.Host.dll) with its
/// family's module and stays the server's entry point: it waits until the host is ready, forwards its
/// log, and stops it when the task is cancelled or stopped by the suite. The host reports its own stats.
/// </summary>
public abstract class HostModuleServerTask : TransferServerTask
{
    [Required] public string HostAssembly { get; set; } = "";

    /// <summary>The URL Kestrel listens on.</summary>
    [Required] public string Url { get; set; } = "";

    public int ReadyTimeoutSeconds { get; set; } = 60;

    public int StopTimeoutSeconds { get; set; } = 20;

    /// <summary>A connection on which nothing moves either way for this many seconds (idle, or stalled mid-request) is dropped with IT3007.</summary>
    public int ConnectionTimeoutSeconds { get; set; } = SettingDefaults.ConnectionTimeoutSeconds;

    /// <summary>
    /// Connections Kestrel serves at once (-p:KestrelMaxConnections): one more is answered with IT3008 in its protocol (gRPC status, SOAP
    /// fault, 503) and asked to close. A gRPC or HTTP client uses one connection; a SOAP client up to MaxInFlight.
    /// </summary>
    public int MaxConnections { get; set; } = 1000;

    /// <summary>HTTPS (TLS 1.2 or 1.3) with the certificate in TlsFolder (made there when missing); Url must then be https://.</summary>
    public bool Tls { get; set; }

    /// <summary>Where the authority's and the server's certificates are (the build's default: artifacts/tls).</summary>
    public string TlsFolder { get; set; } = "";

    /// <summary>Mutual TLS: only clients presenting a certificate from the same authority are served.</summary>
    public bool ClientCertificates { get; set; }

    /// <summary>
    /// The bearer token's file (made there when missing): every request must carry the token, one without it is refused with IT3010.
    /// Empty: no token, allowed only on loopback or with ClientCertificates.
    /// </summary>
    public string TokenFile { get; set; } = "";

    /// <summary>The host module that serves this family (its --module name).</summary>
    protected abstract string Module { get; }

    /// <summary>The module's own arguments, besides the database's.</summary>
    protected virtual IEnumerable<string> ModuleArguments() => [];

    protected override bool ReportsOwnStats => false;

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        if (!File.Exists(HostAssembly))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"The host {HostAssembly} does not exist; build it with -t:BuildTasks.");
        if (ConnectionTimeoutSeconds < 1 || MaxConnections < 1)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"ConnectionTimeoutSeconds (was {ConnectionTimeoutSeconds}) and MaxConnections (was {MaxConnections}) must be at least 1.");
        if (!Uri.TryCreate(Url, UriKind.Absolute, out var url) || (Tls && url.Scheme != Uri.UriSchemeHttps))
            throw new IntegrationException(ErrorCodes.InvalidParameter, Tls ? $"Tls=true needs an https:// Url (was '{Url}')." : $"Url '{Url}' is not an absolute URL.");
        // Made here, where the build's log is (the host only reads it); refused beyond loopback with no credential at all.
        string[] token = ServiceToken.ForServer($"The host ({Module})", url.Host, TokenFile, Tls && ClientCertificates) is null ? [] : ["--token-file", TokenFile];
        string[] tls = [];
        if (Tls)
        {
            // Made here, where the build's log is: the host only reads them.
            tls = ["--tls-folder", TlsCertificates.Ensure(TlsCertificates.RequireFolder(TlsFolder), TlsCertificates.NamesFor(url.Host)).Folder,
                .. ClientCertificates ? new[] { "--client-certificates" } : []];
        }
        var launch = new ServerLaunch(ServerLaunch.DotnetHost,
            [HostAssembly, "--module", Module, "--url", Url, "--provider", ServerProvider, "--server-work", source.Work.ToString(), "--stop-on-stdin-close",
             "--connection-timeout-seconds", ConnectionTimeoutSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture),
             "--max-connections", MaxConnections.ToString(System.Globalization.CultureInfo.InvariantCulture),
             .. tls, .. token, .. ModuleArguments(), .. (string.IsNullOrEmpty(StatsFile) ? Array.Empty<string>() : ["--stats-file", StatsFile])],
            Path.GetDirectoryName(HostAssembly)!);
        var name = $"Host ({Module})";
        // The host's lines (one per client served) are on the screen; its ready line stays below it (this task prints its own).
        var shown = ServerLog.To(Log, name, MessageImportance.High);
        var quiet = ServerLog.To(Log, name);
        // The connection string (a password in it) through the environment, which only its owner reads: never on the command line.
        var host = ServerProcess.Start(name, launch, logFile: null,
            line => (line.Contains(ServerSignals.ReadyMarker, StringComparison.Ordinal) ? quiet : shown)(line),
            environment: new Dictionary<string, string> { [ServerSignals.ConnectionStringVariable] = ServerConnString });
        string endpoint;
        try
        {
            endpoint = await host.WaitReadyAsync(TimeSpan.FromSeconds(ReadyTimeoutSeconds), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            host.Dispose();
            throw;
        }
        Func<CancellationToken, Task> serve = async token =>
        {
            using (host)
            {
                if (await host.WaitForExitOrCancellationAsync(token).ConfigureAwait(false))
                    throw new IntegrationException(ErrorCodes.ServerExited,
                        $"The {name} process exited on its own. Its last output:{Environment.NewLine}{host.RecentOutput()}");
                if (await host.StopAsync(TimeSpan.FromSeconds(StopTimeoutSeconds), CancellationToken.None).ConfigureAwait(false) is null)
                    throw new IntegrationException(ErrorCodes.ServerStopTimeout, $"The {name} process did not stop within {StopTimeoutSeconds} s and was killed.");
            }
        };
        return (endpoint, serve);
    }
}

/// <summary>
/// A host module that answers from the suite's record service (<c>IntegrationTestsService</c>): the database connections its
/// lookups share, how many one concurrent call uses, the message limit and the largest batch one call may ask for.
/// </summary>
public abstract class RecordServiceHostTask : HostModuleServerTask
{
    public int Connections { get; set; } = 8;
    public int Answerers { get; set; } = SettingDefaults.Answerers;
    public long MaxMessageBytes { get; set; } = 64L * 1024 * 1024;
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;

    protected override IEnumerable<string> ModuleArguments() =>
    [
        "--connections", Connections.ToString(System.Globalization.CultureInfo.InvariantCulture),
        "--answerers", Answerers.ToString(System.Globalization.CultureInfo.InvariantCulture),
        "--max-message-bytes", MaxMessageBytes.ToString(System.Globalization.CultureInfo.InvariantCulture),
        "--max-batch-records", MaxBatchRecords.ToString(System.Globalization.CultureInfo.InvariantCulture),
    ];
}
