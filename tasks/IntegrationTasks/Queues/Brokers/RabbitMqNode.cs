using System.Globalization;
using IntegrationTasks.Hosting;

namespace IntegrationTasks.Queues;

public sealed record RabbitMqNodeOptions
{
    /// <summary>Data, logs, cookie and config of the private node.</summary>
    public required string Directory { get; init; }
    public int AmqpPort { get; init; } = 5673;
    public int DistributionPort { get; init; } = 25673;
    public int EpmdPort { get; init; } = 4370;
    public string Server { get; init; } = "/usr/lib/rabbitmq/bin/rabbitmq-server";
    public string Control { get; init; } = "/usr/lib/rabbitmq/bin/rabbitmqctl";

    /// <summary>Where AMQP listens: loopback, or the server host's address when the client is on another (simulated) host.</summary>
    public string BindAddress { get; init; } = SettingDefaults.BindAddress;

    /// <summary>A command the node and its tools run through (<c>ip netns exec NAME</c>: the server side of two hosts).</summary>
    public IReadOnlyList<string> CommandPrefix { get; init; } = [];

    /// <summary>Its AMQPS listener (<see cref="Tls"/>), beside the plaintext one when that is kept too.</summary>
    public int AmqpsPort { get; init; } = SettingDefaults.RabbitMQTlsPort;
    public BrokerTls Tls { get; init; } = BrokerTls.None;

    /// <summary>Its user besides guest (whom only loopback clients may log in as); null: guest only, on loopback.</summary>
    public BrokerCredentials? Credentials { get; init; }
    public string NodeName => $"integrationtasks-{AmqpPort}@localhost";
}

/// <summary>
/// A private RabbitMQ node from Debian's rabbitmq-server: its own data directory, its own ports,
/// every listener on loopback — the Erlang port mapper (epmd) included, which by default listens on
/// all addresses and outlives the broker; it is told to stop with the node.
/// </summary>
public sealed class RabbitMqNode : IDisposable
{
    /// <summary>What rabbitmq-server prints once it accepts connections.</summary>
    public const string StartedMarker = "completed with";

    private readonly RabbitMqNodeOptions _options;
    private ServerProcess? _process;

    private RabbitMqNode(RabbitMqNodeOptions options) => _options = options;

    public int ProcessId => _process?.ProcessId ?? 0;
    public RabbitMqNodeOptions Options => _options;

    /// <summary>The node's script, which takes SIGTERM as a graceful stop of its Erlang VM (the current one, when started again after an exit).</summary>
    public ServerProcess Process => _process ?? throw new ObjectDisposedException(nameof(RabbitMqNode));

    public static bool IsInstalled(RabbitMqNodeOptions options) => File.Exists(options.Server);

    public const string InstallCommand = "apt-get install -y --no-install-recommends rabbitmq-server";

    public static async Task<RabbitMqNode> StartAsync(RabbitMqNodeOptions options, Action<string>? log, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (!IsInstalled(options))
            throw new IntegrationException(ErrorCodes.BrokerUnavailable,
                $"RabbitMQ is not installed ({options.Server} is missing). Install it with: {InstallCommand}");
        Common.OwnerOnlyFiles.CreateDirectory(options.Directory); // its data and configuration: the broker's owner's alone
        // AMQP 1.0 (the Amqp10 transports) on the same listeners as 0-9-1: the plugin Debian's package bundles, and no anonymous
        // login through it (its default would sign every unauthenticated AMQP 1.0 client in as guest).
        await File.WriteAllTextAsync(Path.Combine(options.Directory, "enabled_plugins"), "[rabbitmq_amqp1_0].", cancellationToken).ConfigureAwait(false);
        var configuration = (options.Tls.Plaintext ? $"listeners.tcp.default = {options.BindAddress}:{options.AmqpPort}\n" : "listeners.tcp = none\n")
            + "loopback_users.guest = true\namqp1_0.default_user = none\n" + Listener(options);
        // Always the user this start needs: the node's database outlives the build, and a node once started with the suite's user
        // alone has no guest for a later start without credentials.
        var definitions = Path.Combine(options.Directory, "definitions.json");
        OwnerOnlyFiles.Write(definitions, Definitions(options.Credentials));
        configuration += $"load_definitions = {definitions}\n";
        OwnerOnlyFiles.Write(Path.Combine(options.Directory, "rabbitmq.conf"), configuration);

        var node = new RabbitMqNode(options);
        var launch = new ServerLaunch(options.Server, [], options.Directory).WithPrefix(options.CommandPrefix);
        node._process = ServerProcess.Start("RabbitMQ", launch, Path.Combine(options.Directory, "console.log"), log,
            StartedMarker, Environment(options));
        try
        {
            await node._process.WaitReadyAsync(timeout, cancellationToken).ConfigureAwait(false);
            return node;
        }
        catch
        {
            await node.StopAsync(CancellationToken.None).ConfigureAwait(false);
            node.Dispose();
            throw;
        }
    }

    /// <summary>AMQPS: TLS 1.2 and 1.3 with the suite's certificate; with ClientCertificates, only clients presenting one from its authority.</summary>
    private static string Listener(RabbitMqNodeOptions options) => options.Tls.Certificates is not { } tls ? "" : string.Join("",
        $"listeners.ssl.default = {options.BindAddress}:{options.AmqpsPort.ToString(CultureInfo.InvariantCulture)}\n",
        $"ssl_options.cacertfile = {tls.AuthorityPath}\n", $"ssl_options.certfile = {tls.ServerCertificatePath}\n", $"ssl_options.keyfile = {tls.ServerKeyPath}\n",
        options.Tls.ClientCertificates ? "ssl_options.verify = verify_peer\nssl_options.fail_if_no_peer_cert = true\n" : "ssl_options.verify = verify_none\nssl_options.fail_if_no_peer_cert = false\n", "ssl_options.versions.1 = tlsv1.3\n", "ssl_options.versions.2 = tlsv1.2\n");

    /// <summary>
    /// The node's user (the suite's, or guest without credentials, whom loopback_users keeps to loopback), its default virtual host and
    /// its rights there, imported at each boot. The password is there only as RabbitMQ's salted SHA-256
    /// (<c>rabbit_password_hashing_sha256</c>: base64 of a 4-byte salt and SHA-256 of the salt and the password). A new node given
    /// the suite's user makes no guest at all.
    /// </summary>
    public static string Definitions(BrokerCredentials? credentials)
    {
        var (user, password) = credentials is null ? ("guest", "guest") : (credentials.UserName, credentials.Password);
        var salt = System.Security.Cryptography.RandomNumberGenerator.GetBytes(4);
        var hash = System.Security.Cryptography.SHA256.HashData([.. salt, .. System.Text.Encoding.UTF8.GetBytes(password)]);
        return System.Text.Json.JsonSerializer.Serialize(new
        {
            users = new[] { new { name = user, password_hash = Convert.ToBase64String([.. salt, .. hash]), hashing_algorithm = "rabbit_password_hashing_sha256", tags = credentials is null ? new[] { "administrator" } : [] } },
            vhosts = new[] { new { name = "/" } },
            permissions = new[] { new { user, vhost = "/", configure = ".*", write = ".*", read = ".*" } },
        });
    }

    public static IReadOnlyDictionary<string, string> Environment(RabbitMqNodeOptions options)
    {
        var environment = EnvironmentOf(options);
        // TLS only: no plaintext listener, which these would open again.
        if (!options.Tls.Plaintext)
        {
            environment.Remove("RABBITMQ_NODE_IP_ADDRESS");
            environment.Remove("RABBITMQ_NODE_PORT");
        }
        return environment;
    }

    private static Dictionary<string, string> EnvironmentOf(RabbitMqNodeOptions options) => new()
    {
        ["HOME"] = options.Directory,
        ["RABBITMQ_NODENAME"] = options.NodeName,
        ["RABBITMQ_NODE_IP_ADDRESS"] = options.BindAddress,
        ["RABBITMQ_NODE_PORT"] = options.AmqpPort.ToString(CultureInfo.InvariantCulture),
        ["RABBITMQ_DIST_PORT"] = options.DistributionPort.ToString(CultureInfo.InvariantCulture),
        ["RABBITMQ_MNESIA_BASE"] = Path.Combine(options.Directory, "mnesia"),
        ["RABBITMQ_LOG_BASE"] = Path.Combine(options.Directory, "log"),
        ["RABBITMQ_PID_FILE"] = PidFile(options),
        ["RABBITMQ_ENABLED_PLUGINS_FILE"] = Path.Combine(options.Directory, "enabled_plugins"),
        ["RABBITMQ_CONFIG_FILE"] = Path.Combine(options.Directory, "rabbitmq"),
        ["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"] = "-kernel inet_dist_use_interface {127,0,0,1}",
        // rabbitmqctl boots an Erlang node of its own, whose distribution listener would take any address on a random port.
        ["RABBITMQ_CTL_ERL_ARGS"] = "-kernel inet_dist_use_interface {127,0,0,1}",
        ["ERL_EPMD_ADDRESS"] = "127.0.0.1",
        ["ERL_EPMD_PORT"] = options.EpmdPort.ToString(CultureInfo.InvariantCulture),
    };

    /// <summary>
    /// The broker's most client connections at once (a limit on its default virtual host; -1: none). The queue servers'
    /// clients connect to the broker, not to the server, so this is where a RabbitMQ transport's maximum is kept: one more
    /// connection is refused by the broker at login ("connection limit (N) is reached"), which the client reports as IT3008.
    /// </summary>
    public async Task SetConnectionLimitAsync(int maxConnections, CancellationToken cancellationToken)
    {
        var command = new ServerLaunch(_options.Control,
            ["-n", _options.NodeName, "set_vhost_limits", "-p", "/", $"{{\"max-connections\": {maxConnections.ToString(CultureInfo.InvariantCulture)}}}"],
            _options.Directory).WithPrefix(_options.CommandPrefix);
        await ExternalCommand.RunAsync(command.FileName, command.Arguments, TimeSpan.FromSeconds(60), cancellationToken, Environment(_options)).ConfigureAwait(false);
    }

    /// <summary>
    /// Stops the node with SIGTERM to its Erlang VM, which RabbitMQ takes as a graceful stop (its log: "SIGTERM received - shutting
    /// down"), then its epmd; kills whatever is left. Not with rabbitmqctl: that boots a second Erlang VM to ask the first, which
    /// took most of the stop's time under busy loops, and longer under the test suite's load. rabbitmqctl only when the VM
    /// is not known (no pid file yet).
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_process is not null)
            await _process.EndRestartsAsync(cancellationToken).ConfigureAwait(false);
        if (_process is { HasExited: false })
        {
            if (ErlangVmProcessId() is not { } vm || !ProcessTree.Signal(vm, ProcessTree.SigTerm))
                await RunAsync(_options.Control, ["-n", _options.NodeName, "stop"], TimeSpan.FromSeconds(60), cancellationToken).ConfigureAwait(false);
            if (await _process.StopAsync(TimeSpan.FromSeconds(60), cancellationToken).ConfigureAwait(false) is null)
                _process.Kill();
        }
        await StopEpmdAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The broker's Erlang VM: the pid it wrote (RABBITMQ_PID_FILE), if that process is one the node's script started.</summary>
    private int? ErlangVmProcessId()
    {
        try
        {
            return int.TryParse(File.ReadAllText(PidFile(_options)).Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
                   && _process is not null && pid != _process.ProcessId && ProcessTree.Of(_process.ProcessId).Contains(pid)
                ? pid
                : null;
        }
        catch (IOException)
        {
            return null;
        }
    }

    private static string PidFile(RabbitMqNodeOptions options) => Path.Combine(options.Directory, "rabbitmq.pid");

    /// <summary>
    /// epmd refuses -kill while a node is registered with it ("Killing not allowed - living nodes in database"), and a node whose
    /// process has just exited can still be registered for a moment: an epmd was once left running after a test run. So wait
    /// (at most 10 s) until it lists no node, then kill it.
    /// </summary>
    private async Task StopEpmdAsync(CancellationToken cancellationToken)
    {
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (await RunAsync("epmd", ["-names"], TimeSpan.FromSeconds(15), cancellationToken).ConfigureAwait(false) is { } names)
        {
            if (names.ExitCode != 0)
                return; // no epmd on our port: nothing to stop
            if (!names.Output.Contains("name ", StringComparison.Ordinal) || waited.Elapsed > TimeSpan.FromSeconds(10))
                break;
            await Task.Delay(TimeSpan.FromMilliseconds(200), cancellationToken).ConfigureAwait(false);
        }
        await RunAsync("epmd", ["-kill"], TimeSpan.FromSeconds(15), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The command's outcome; null when it is not installed or did not finish in time.</summary>
    private async Task<ExternalCommand.Outcome?> RunAsync(string program, string[] arguments, TimeSpan timeout, CancellationToken cancellationToken)
    {
        try
        {
            var command = new ServerLaunch(program, arguments, _options.Directory).WithPrefix(_options.CommandPrefix);
            return await ExternalCommand.RunAsync(command.FileName, command.Arguments, timeout, cancellationToken, Environment(_options)).ConfigureAwait(false);
        }
        catch (IntegrationException e) when (e.Code == ErrorCodes.ProgramNotFound)
        {
            // epmd or rabbitmqctl not on PATH: nothing of ours to stop with it.
            return null;
        }
        catch (IntegrationException e) when (e.Code == ErrorCodes.Timeout)
        {
            // The caller kills what is left.
            return null;
        }
    }

    public void Dispose()
    {
        _process?.Dispose();
        _process = null;
    }
}
