using IntegrationTasks.Common;
using IntegrationTasks.Host;
using IntegrationTasks.Hosting;

// The one ASP.NET Core host process (ASP.NET Core cannot load inside MSBuild): Kestrel with the endpoint
// modules named by --module. Its server task starts it, waits for the ready line, forwards its log and stops it.
// Arguments: --module NAME (one or more), --url, --tls-folder, --client-certificates, --token-file, --stop-on-stdin-close, --stats-file, --counters-file, --connection-timeout-seconds,
// and each module's own.
// Its client mode runs one client run in a process of its own, for the build that started it; no Kestrel is built.
if (args is [IntegrationTasks.Transfer.ClientHost.Verb, ..])
    return await IntegrationTasks.Transfer.ClientHost.RunAsync(Console.In, Console.Out);

HostArguments arguments;
List<IHostModule> modules;
System.Net.Security.SslStreamCertificateContext? tlsCertificate = null;
System.Security.Cryptography.X509Certificates.X509Certificate2? clientAuthority = null;
ServiceToken? serviceToken = null;
var builder = WebApplication.CreateSlimBuilder();
try
{
    arguments = HostArguments.Parse(args);
    if (arguments.Modules.Count == 0)
        throw new ArgumentException($"Name at least one module with --module ({HostModules.Known}).");
    modules = arguments.Modules.Select(name => HostModules.Create(name, arguments)).ToList();
    foreach (var module in modules)
        await module.ConfigureAsync(builder, CancellationToken.None);
    if (arguments.Value("--token-file") is { Length: > 0 } tokenFile)
        serviceToken = ServiceToken.Load(tokenFile);
    if (arguments.Value("--tls-folder") is { Length: > 0 } tlsFolder)
    {
        try
        {
            tlsCertificate = TlsCertificates.In(tlsFolder).LoadServerContext();
            if (arguments.ClientCertificates)
                clientAuthority = TlsCertificates.In(tlsFolder).LoadAuthority();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
        {
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"--tls-folder {tlsFolder} holds no usable server certificate and key: {e.Message}");
        }
    }
}
catch (Exception e) when (e is IntegrationException or ArgumentException or FormatException)
{
    Console.Error.WriteLine($"error {CodedError.Format(e is IntegrationException ie ? ie.Code : ErrorCodes.InvalidParameter, e.Message)}");
    return 1;
}

builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(o => o.SingleLine = true);
builder.Logging.SetMinimumLevel(LogLevel.Warning);
builder.Logging.AddProvider(new KestrelEvents());
builder.Logging.AddFilter<KestrelEvents>(KestrelEvents.Category, LogLevel.Debug);
foreach (var category in KestrelEvents.ClientCategories)
    builder.Logging.AddFilter<Microsoft.Extensions.Logging.Console.ConsoleLoggerProvider>(category, LogLevel.None);
foreach (var module in modules)
    module.ConfigureLogging(builder.Logging);
builder.WebHost.UseUrls(arguments.Url);
if (tlsCertificate is not null)
    builder.WebHost.UseKestrelHttpsConfiguration(); // the slim builder leaves HTTPS out unless asked
var connectionTimeout = TimeSpan.FromSeconds(arguments.Number("--connection-timeout-seconds", SettingDefaults.ConnectionTimeoutSeconds));
ConnectionLimit? connectionLimit = null;
builder.WebHost.ConfigureKestrel(kestrel =>
{
    kestrel.AddServerHeader = false;
    if (tlsCertificate is { } certificate)
    {
        // An https:// URL: the certificate the suite's private authority signed (its server task made it), TLS 1.2 and 1.3 only.
        kestrel.ConfigureHttpsDefaults(https =>
        {
            https.ServerCertificate = certificate.TargetCertificate;
            https.ServerCertificateChain = [.. certificate.IntermediateCertificates];
            https.SslProtocols = TlsCertificates.Protocols;
            https.HandshakeTimeout = TimeSpan.FromSeconds(Math.Min(30, arguments.Number("--connection-timeout-seconds", SettingDefaults.ConnectionTimeoutSeconds)));
            if (arguments.ClientCertificates && clientAuthority is { } authority)
            {
                // Mutual TLS: a client certificate from the same authority, made for client authentication, or no connection.
                https.ClientCertificateMode = Microsoft.AspNetCore.Server.Kestrel.Https.ClientCertificateMode.RequireCertificate;
                https.ClientCertificateValidation = (certificate, chain, errors) => TlsCertificates.IsClientFromAuthority(certificate, chain, errors, authority);
            }
        });
    }
    // A client that has not sent its headers within the connection timeout is answered 408 and dropped, as the TCP servers drop one
    // that sends no complete request (Kestrel's own default, 30 s, stays the upper bound).
    kestrel.Limits.RequestHeadersTimeout = TimeSpan.FromSeconds(Math.Min(30, connectionTimeout.TotalSeconds));
    // One endpoint-defaults callback for all (Kestrel keeps only the last one set): the modules' say, then the stall guard.
    kestrel.ConfigureEndpointDefaults(listen =>
    {
        foreach (var module in modules)
            module.ConfigureEndpoint(listen);
        StallGuard.Use(listen, connectionTimeout, listen.ApplicationServices.GetRequiredService<ILoggerFactory>().CreateLogger("IntegrationTasks.Host.StallGuard"));
        connectionLimit ??= new ConnectionLimit((int)arguments.Number("--max-connections", 1000),
            listen.ApplicationServices.GetRequiredService<ILoggerFactory>().CreateLogger("IntegrationTasks.Host.ConnectionLimit"));
        connectionLimit.Use(listen);
    });
});
var app = builder.Build();
app.Use(StallGuard.MarkRequestAsync);
app.Use(ConnectionLimit.RefuseOverLimitAsync);
if (serviceToken is not null)
    app.Use(new ServiceTokenGuard(serviceToken, app.Services.GetRequiredService<ILoggerFactory>().CreateLogger("IntegrationTasks.Host.ServiceToken")).RequireTokenAsync);
foreach (var module in modules)
    module.Map(app);

try
{
    await app.StartAsync();
}
catch (IOException e) when (e.InnerException is System.Net.Sockets.SocketException { SocketErrorCode: System.Net.Sockets.SocketError.AddressAlreadyInUse } || e.Message.Contains("address already in use", StringComparison.OrdinalIgnoreCase))
{
    Console.Error.WriteLine($"error {CodedError.Format(ErrorCodes.PortInUse, $"{arguments.Url} is already in use (a server left running?): {e.Message}")}");
    return 1;
}
Console.WriteLine(ServerSignals.ReadyLine(arguments.Url, $"Host: {string.Join(", ", modules.Select(m => $"{m.Name}: {m.Describe()}"))}"));
if (arguments.StopOnStdinClose)
    _ = ServerSignals.StopWhenInputClosesAsync(app.Lifetime.StopApplication);
await using (var stats = arguments.StatsFile is { Length: > 0 } ? new ServerStatsWriter(arguments.StatsFile) : null)
await using (var counters = arguments.Value("--counters-file") is { Length: > 0 } countersFile ? new IntegrationTasks.Labs.RuntimeCounters(countersFile) : null)
    await app.WaitForShutdownAsync();
Console.WriteLine("Host stopped.");
return 0;
