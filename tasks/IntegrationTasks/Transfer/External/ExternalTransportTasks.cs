using System.Net.Sockets;
using IntegrationTasks.Data;
using IntegrationTasks.Wire;

namespace IntegrationTasks.Transfer;

/// <summary>What the client and server of an external transport share: its assembly, its name, its endpoint and its settings.</summary>
internal sealed record ExternalTransportReference(string AssemblyPath, string Name, string Settings)
{
    /// <summary>The transport, checked against what its item says: its settings known to it, each value one the setting takes.</summary>
    public (Transport Transport, TransportSettingValues Settings) Resolve(int port)
    {
        var transport = ExternalTransports.Find(AssemblyPath, Name);
        if (transport.ServerKind == TransportServerKind.TcpPort && port is < 1 or > 65535)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"{Name} is served on a TCP port: its ExternalTransport item needs a Port (1–65535, was {port}).");
        return (transport, TransportSettingValues.Read(transport, ParameterText.List(Settings).Select(pair => ParameterText.Split(Name, pair))));
    }

    public static IntegrationException Coded(TransportException e) => new(e.Code, e.Message, e);
}

/// <summary>An external transport's settings as its item gives them, each read by the setting the transport declares.</summary>
internal sealed class TransportSettingValues
{
    private readonly Transport _transport;
    private readonly Dictionary<TransportSetting, object> _values;

    private TransportSettingValues(Transport transport, Dictionary<TransportSetting, object> values) => (_transport, _values) = (transport, values);

    /// <summary>Every pair read, or IT1001 for a name the transport does not declare or a value its setting does not take.</summary>
    public static TransportSettingValues Read(Transport transport, IEnumerable<(string Name, string Value)> pairs)
    {
        var values = new Dictionary<TransportSetting, object>();
        foreach (var (name, text) in pairs)
        {
            var setting = transport.Settings.FirstOrDefault(s => string.Equals(s.Name, name, StringComparison.Ordinal))
                ?? throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"{transport.Name} takes no setting {name} (it takes: {(transport.Settings.Count == 0 ? "none" : string.Join(", ", transport.Settings.Select(s => s.Name)))}).");
            values[setting] = setting.TryRead(text, out var value) && value is not null
                ? value
                : throw new IntegrationException(ErrorCodes.InvalidParameter, $"{transport.Name}'s setting {name} must be {setting.Requirement} (was '{text}').");
        }
        return new(transport, values);
    }

    /// <summary>The item's value, or the setting's default; a setting the transport does not declare is the transport's own mistake.</summary>
    public T ValueOf<T>(TransportSetting<T> setting) where T : IParsable<T> =>
        !_transport.Settings.Contains(setting)
            ? throw new TransportException(TransportError.InvalidSetting, $"{setting.Name} is not one of {_transport.Name}'s settings (Transport.Settings).")
            : _values.TryGetValue(setting, out var value) ? (T)value : setting.Default;
}

/// <summary>The log a transport writes to, on the task's.</summary>
internal sealed class ExternalTransportLog(IEventLog log, string name) : ITransportLog
{
    public void Info(string message) => log.Info($"{name}: {message}");
    public void Detail(string message) => log.Detail($"{name}: {message}");
    public void Warning(TransportError error, string message) => log.Warning(TransportException.CodeOf(error), $"{name}: {message}");
}

/// <summary>
/// The client of a transport written outside the suite (docs/write-your-own-transport.md): the suite's client task — timing, the
/// client database, many clients, faults, resumption, the run's file — around the transport's own <see cref="TransportClient"/>.
/// </summary>
public sealed class ExternalClient : TransferClientTask
{
    /// <summary>The transport's assembly (its ExternalTransport item's, built from its Project).</summary>
    [Required] public string TransportAssembly { get; set; } = "";

    /// <summary>The transport's name: its <see cref="Transport.Name"/> and its item's Include.</summary>
    [Required] public string Name { get; set; } = "";

    public string Host { get; set; } = SettingDefaults.HostName;
    public int Port { get; set; }

    /// <summary>The property holding the port (the item's PortProperty): what the relay and -p: set, so Port must be its value.</summary>
    public string PortProperty { get; set; } = "";

    /// <summary>Its settings, <c>Name=Value</c> separated by commas.</summary>
    public string Settings { get; set; } = "";

    public int MaxFrameBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    protected override (long Bytes, string Property)? MessageLimit => (MaxFrameBytes, "MaxFrameBytes");

    private (Transport Transport, TransportSettingValues Settings)? _resolved;

    private (Transport Transport, TransportSettingValues Settings) Resolved => _resolved ??= Resolve();

    private (Transport Transport, TransportSettingValues Settings) Resolve()
    {
        // A relayed run (latency, faults) moves the client by setting the port property; a Port not read from it would bypass the
        // relay, and the run would be recorded as relayed when it was not.
        if (PortProperty.Length > 0 && BuildEngine is IBuildEngine6 engine && engine.GetGlobalProperties().TryGetValue(PortProperty, out var set)
            && !(int.TryParse(set, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var setPort) && setPort == Port))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{Name}'s Port is {Port} while {PortProperty} is {set}: its ExternalTransport item must say Port=\"$({PortProperty})\", or the relay and -p:{PortProperty} cannot reach it.");
        return new ExternalTransportReference(TransportAssembly, Name, Settings).Resolve(Port);
    }

    private TransportCapabilities Capabilities => Resolved.Transport.Capabilities;

    protected override string TransportName => Name;
    protected override bool ServesManyClients => Capabilities.HasFlag(TransportCapabilities.ManyClients);

    protected override async Task<TransferResult> TransferAsync(BatchPlan plan, BatchImporter importer, CancellationToken cancellationToken)
    {
        var (transport, settings) = Resolved;
        var resumption = Resumption(plan, resumes: Capabilities.HasFlag(TransportCapabilities.Resumes));
        var log = new ExternalTransportLog(EventLog, Name);
        long sent = 0, received = 0;
        var measured = true;
        // The importer's one connection takes one transaction at a time: every attempt's writes take turns on it.
        using var importing = new SemaphoreSlim(1, 1);
        await resumption.RunAsync(async (missing, token) =>
        {
            var session = new Session(this, plan, missing, importer, resumption, settings, log, importing);
            var client = transport.CreateClient();
            try
            {
                await client.TransferAsync(session, token).ConfigureAwait(false);
            }
            catch (TransportException e)
            {
                throw ExternalTransportReference.Coded(e);
            }
            finally
            {
                await session.CloseAsync().ConfigureAwait(false);
                await client.DisposeAsync().ConfigureAwait(false);
                Interlocked.Add(ref sent, session.BytesSent);
                Interlocked.Add(ref received, session.BytesReceived);
                measured &= session.BytesCounted;
            }
            if (session.Unwritten() is { Count: > 0 } unwritten)
                throw new IntegrationException(ErrorCodes.TransferFailed,
                    $"{Name}'s client returned with {unwritten.Count} of its {missing.Count} batches not written (the first: batch {unwritten[0].Index}, IDs {unwritten[0].FirstId}–{unwritten[0].LastId}).");
        }, cancellationToken).ConfigureAwait(false);
        if (!measured)
            Log.LogMessage(MessageImportance.High,
                "{0} counted no bytes (it neither connects through ClientSession.ConnectAsync nor calls CountBytes): its bytes columns read 'not measured'.", Name);
        return new TransferResult(sent, received) { BytesMeasured = measured };
    }

    private sealed class Session(ExternalClient task, BatchPlan plan, IReadOnlyList<int> missing, BatchImporter importer, ResumingTransfer resumption,
        TransportSettingValues settings, ITransportLog log, SemaphoreSlim importing) : ClientSession
    {
        private long _sent;
        private long _received;

        /// <summary>The session's batches not written yet: a batch written twice, or one it did not ask for, is refused.</summary>
        private readonly HashSet<int> _unwritten = [.. missing];

        /// <summary>Set once its attempt ended: a write still coming from a task the client left running is refused, not imported.</summary>
        private bool _closed;

        public override string Host => task.Host;
        public override int Port => task.Port;
        public override T ValueOf<T>(TransportSetting<T> setting) => settings.ValueOf(setting);
        public override IReadOnlyList<RequestedBatch> Batches { get; } = [.. missing.Select(b => new RequestedBatch(b, plan.FirstId(b), plan.BatchSize))];
        public override int MaxInFlight => task.Capabilities.HasFlag(TransportCapabilities.Pipelines) ? task.MaxInFlight : 1;
        public override int MaxFrameBytes => task.MaxFrameBytes;
        public override int ClientIndex => task.ClientIndex;
        public override ITransportLog Log => log;

        /// <summary>The connections opened through <see cref="ConnectAsync"/>: counted here, closed with the session.</summary>
        private readonly List<CountingStream> _connections = [];

        public long BytesSent => Interlocked.Read(ref _sent) + Counted(c => c.BytesWritten);
        public long BytesReceived => Interlocked.Read(ref _received) + Counted(c => c.BytesRead);
        public bool BytesCounted { get; private set; }

        private long Counted(Func<CountingStream, long> bytes)
        {
            lock (_connections)
                return _connections.Sum(bytes);
        }

        public override async Task<Stream> ConnectAsync(CancellationToken cancellationToken)
        {
            if (Port == 0)
                throw new TransportException(TransportError.InvalidSetting, $"{task.Name} is not served on a TCP port (TransportServerKind.NoPort): it has no server to connect to.");
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                await socket.ConnectAsync(Host, Port, cancellationToken).ConfigureAwait(false);
            }
            catch (SocketException e)
            {
                socket.Dispose();
                throw new TransportException(TransportError.ConnectionFailed, $"Cannot reach {Host}:{Port}: {e.Message}", e);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
            var connection = new CountingStream(new NetworkStream(socket, ownsSocket: true));
            lock (_connections)
            {
                if (_closed)
                {
                    connection.Dispose();
                    throw new TransportException(TransportError.ConnectionLost, "A connection was asked for after its attempt ended.");
                }
                _connections.Add(connection);
                BytesCounted = true;
            }
            Connected();
            return connection;
        }

        public override void Connected()
        {
            resumption.MarkConnected();
            importer.MarkSetupDone();
        }

        public override void Sent(RequestedBatch batch)
        {
            Check(batch);
            resumption.Committed.Latency.Sent(batch.Index);
        }

        public override void CountBytes(long sent, long received)
        {
            BytesCounted = true;
            Interlocked.Add(ref _sent, sent);
            Interlocked.Add(ref _received, received);
        }

        public override async ValueTask WriteAsync(RequestedBatch batch, IReadOnlyList<ServiceRecord> records, CancellationToken cancellationToken)
        {
            Check(batch);
            if (records.FirstOrDefault(r => !batch.Contains(r.Id)) is { } stray)
                throw new TransportException(TransportError.MalformedMessage,
                    $"Batch {batch.Index} (IDs {batch.FirstId}–{batch.LastId}) was given record {stray.Id}, which is not one of its IDs.");
            await importing.WaitAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                if (_closed)
                    throw new TransportException(TransportError.MalformedMessage, $"Batch {batch.Index} came after its attempt ended.");
                if (!_unwritten.Contains(batch.Index))
                    throw new TransportException(TransportError.MalformedMessage, $"Batch {batch.Index} was written already, or this session did not ask for it.");
                resumption.Committed.Latency.Received(batch.Index);
                await importer.ImportAsync(records, cancellationToken).ConfigureAwait(false);
                resumption.Committed.Add(batch.Index);
                _unwritten.Remove(batch.Index);
            }
            finally
            {
                importing.Release();
            }
        }

        /// <summary>Ends the session once a write in progress is done; its unwritten batches are final from here.</summary>
        public async Task CloseAsync()
        {
            await importing.WaitAsync(CancellationToken.None).ConfigureAwait(false);
            lock (_connections)
            {
                _closed = true;
                foreach (var connection in _connections)
                    connection.Dispose();
            }
            importing.Release();
        }

        /// <summary>The session's batches its client did not write.</summary>
        public List<RequestedBatch> Unwritten() => [.. Batches.Where(b => _unwritten.Contains(b.Index))];

        private void Check(RequestedBatch batch)
        {
            if (batch.Index < 0 || batch.Index >= plan.TotalBatches || batch.FirstId != plan.FirstId(batch.Index) || batch.Count != plan.BatchSize)
                throw new TransportException(TransportError.MalformedMessage, $"Batch {batch.Index} from ID {batch.FirstId} ({batch.Count} records) is not one the session asked for.");
        }
    }
}

/// <summary>The server of a transport written outside the suite: the suite's server task — its database, readiness, stopping — around the transport's own.</summary>
public sealed class ExternalServer : TransferServerTask
{
    [Required] public string TransportAssembly { get; set; } = "";
    [Required] public string Name { get; set; } = "";
    public string BindAddress { get; set; } = SettingDefaults.BindAddress;
    public int Port { get; set; }
    public string Settings { get; set; } = "";
    public int MaxBatchRecords { get; set; } = SettingDefaults.MaxBatchRecords;
    public int MaxFrameBytes { get; set; } = SettingDefaults.MaxFrameBytes;

    protected override string ServerName => $"{Name}Server";

    protected override async Task<(string Endpoint, Func<CancellationToken, Task> Serve)> StartAsync(RecordSource source, CancellationToken cancellationToken)
    {
        var (transport, settings) = new ExternalTransportReference(TransportAssembly, Name, Settings).Resolve(Port);
        if (transport.ServerKind == TransportServerKind.TcpPort && Hosting.ServiceToken.ListensBeyondLoopback(BindAddress)
            && !transport.Capabilities.HasFlag(TransportCapabilities.AuthenticatesClients))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{Name}'s server would listen on {BindAddress}, beyond loopback, and {Name} does not say it authenticates its clients (TransportCapabilities.AuthenticatesClients): run it on loopback, or give it credentials of its own.");
        var session = new Session(this, source, settings, new ExternalTransportLog(EventLog, Name));
        var server = transport.CreateServer();
        TransportListener listener;
        try
        {
            listener = await server.BindAsync(session, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception bind) when (bind is not OutOfMemoryException)
        {
            // The bind's own error is the one to report, whatever the server's disposal does after it.
            try
            {
                await server.DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception disposal) when (disposal is not OutOfMemoryException)
            {
                // Reported as the bind's failure below; a second error from the same server would only hide it.
            }
            if (bind is TransportException e)
                throw ExternalTransportReference.Coded(e);
            throw;
        }
        var endpoint = transport.ServerKind == TransportServerKind.TcpPort ? $"tcp://{BindAddress}:{Port}" : Name;
        return (endpoint, async stop =>
        {
            // The listener, then the server, whatever serving ended with; the transport's errors (its disposal's too) with their codes.
            try
            {
                await using (server.ConfigureAwait(false))
                await using (listener.ConfigureAwait(false))
                    await listener.RunAsync(stop).ConfigureAwait(false);
            }
            catch (TransportException e)
            {
                throw ExternalTransportReference.Coded(e);
            }
        });
    }

    private sealed class Session(ExternalServer task, RecordSource source, TransportSettingValues settings, ITransportLog log) : ServerSession
    {
        public override string BindAddress => task.BindAddress;
        public override int Port => task.Port;
        public override T ValueOf<T>(TransportSetting<T> setting) => settings.ValueOf(setting);
        public override int MaxBatchRecords => task.MaxBatchRecords;
        public override int MaxFrameBytes => task.MaxFrameBytes;
        public override ITransportLog Log => log;

        public override async Task<IServiceTableReader> OpenReaderAsync(CancellationToken cancellationToken) =>
            new Reader(await source.OpenLookupAsync(cancellationToken).ConfigureAwait(false), task.MaxBatchRecords);
    }

    /// <summary>A reader bounds what one request may cost the server, whatever the transport checked.</summary>
    private sealed class Reader(RecordLookup lookup, int maxBatchRecords) : IServiceTableReader
    {
        public IAsyncEnumerable<ServiceRecord> ReadAsync(RequestedBatch batch, CancellationToken cancellationToken) =>
            batch.Count > maxBatchRecords
                ? throw new TransportException(TransportError.BatchTooLarge, $"A request for {batch.Count:N0} records is more than {maxBatchRecords:N0} (MaxBatchRecords).")
                : batch.FirstId < 1 || batch.Count < 1 || (long)batch.FirstId + batch.Count - 1 > int.MaxValue
                    ? throw new TransportException(TransportError.MalformedMessage, $"A request for {batch.Count} records from ID {batch.FirstId} names no batch.")
                    : lookup.ReadAsync(batch.FirstId, batch.Count, cancellationToken);

        public ValueTask DisposeAsync() => lookup.DisposeAsync();
    }
}
