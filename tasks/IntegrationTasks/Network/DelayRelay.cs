using System.Buffers;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using IntegrationTasks.Hosting;
using IntegrationTasks.Streams;

namespace IntegrationTasks.Network;

/// <summary>What the relay does to the connections it forwards, once per relay: nothing, a reset, or a silence.</summary>
public enum RelayFaultKind
{
    None,

    /// <summary>
    /// Once <see cref="RelayOptions.FaultAfterBytes"/> have been taken from the server, the connection they came on is reset (RST) both ways,
    /// after exactly that many of the server's bytes have been passed on.
    /// </summary>
    Reset,

    /// <summary>Nothing is forwarded either way for <see cref="RelayOptions.Silence"/> once that many bytes have been taken from the server.</summary>
    Silence,

    /// <summary>
    /// The server's process (and its children) is killed (SIGKILL) once that many bytes have been taken from it; the process id is read
    /// from <see cref="RelayOptions.KillPidFile"/> at that moment. The connection is then cut where the count ended (unless
    /// <see cref="RelayOptions.CutOnKill"/> is off: a broker's connection, whose server is not the relay's target), so what the server had
    /// written beyond it never arrives, whatever the buffers held. Bringing the server back is its host's job (StartServer RestartOnExit).
    /// </summary>
    KillServer,

    /// <summary>
    /// The broker the connection goes to is asked to stop (SIGTERM, its clean shutdown; the process id read from
    /// <see cref="RelayOptions.KillPidFile"/>) once that many bytes have been taken from it, and every byte is passed on: the broker
    /// closes its connections itself. Bringing it back is its owner's job (StartOwnedBroker RestartOnExit).
    /// </summary>
    RestartBroker,
}

public sealed record RelayOptions
{
    /// <summary>Where the relay listens: an address and port (port 0: any free one), or a Unix socket's path.</summary>
    public required EndPoint Listen { get; init; }

    /// <summary>Where it forwards every connection it accepts: a host and port, or (<see cref="TargetPath"/>) a Unix socket.</summary>
    public string TargetHost { get; init; } = "";

    public int TargetPort { get; init; }

    /// <summary>The server's Unix socket, for a server reached over one (Connector=Unix).</summary>
    public string? TargetPath { get; init; }

    internal string Target => TargetPath is { Length: > 0 } path ? $"unix://{path}" : $"{TargetHost}:{TargetPort}";

    /// <summary>How long each chunk is held, in each direction (half the round trip).</summary>
    public TimeSpan OneWayDelay { get; init; }

    /// <summary>Bytes held per direction of a connection at most; beyond them the relay stops reading (TCP flow control does the rest).</summary>
    public int MaxHeldBytes { get; init; } = 4 * 1024 * 1024;

    public RelayFaultKind Fault { get; init; }

    /// <summary>
    /// Bytes taken from the server (all connections) before the fault: counted where the relay reads them, so the fault lands at the
    /// same point of the transfer whatever the relay, the kernel or the client buffer.
    /// </summary>
    public long FaultAfterBytes { get; init; }

    /// <summary>KillServer also cuts the connection at the threshold (off when the relay's target is a broker that outlives the server).</summary>
    public bool CutOnKill { get; init; } = true;

    public TimeSpan Silence { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>For <see cref="RelayFaultKind.KillServer"/>: the file holding the server's current process id; for <see cref="RelayFaultKind.RestartBroker"/>, the broker's.</summary>
    public string? KillPidFile { get; init; }

    /// <summary>For <see cref="RelayFaultKind.KillServer"/> of a server on another machine: kills it there, returning its process id.</summary>
    public Func<CancellationToken, Task<int>>? KillServerThere { get; init; }

    /// <summary>For <see cref="RelayFaultKind.RestartBroker"/> of a broker on another machine: asks it to stop there, returning its process id.</summary>
    public Func<CancellationToken, Task<int>>? StopBrokerThere { get; init; }

    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(10);
}

/// <summary>
/// A stream relay (TCP, or a Unix socket to a Unix socket) that adds latency, as <c>netem</c> would if this kernel had it: every chunk read from one side is written
/// to the other after <see cref="RelayOptions.OneWayDelay"/>, in order, never dropped or reordered, with at most
/// <see cref="RelayOptions.MaxHeldBytes"/> held per direction. It is also where network faults are injected (a reset, a
/// silence), once, after a given number of bytes.
/// </summary>
public sealed class DelayRelay(RelayOptions options, IEventLog log) : IAsyncDisposable
{
    private const int ChunkBytes = 64 * 1024;
    private IStreamListener? _listener;
    private readonly CancellationTokenSource _stop = new();
    private long _forwarded;
    private long _fromServer;
    private int _faultDone;
    private readonly Stopwatch _sinceStart = Stopwatch.StartNew();
    private TimeSpan? _faultAt;
    private long _silentUntil;
    private int _connections;

    public long BytesForwarded => Interlocked.Read(ref _forwarded);
    public int Connections => Volatile.Read(ref _connections);
    public bool FaultInjected => Volatile.Read(ref _faultDone) == 1;

    /// <summary>Bytes taken from the server so far (what the fault threshold counts).</summary>
    public long BytesFromServer => Interlocked.Read(ref _fromServer);

    /// <summary>Whether the fault landed, where and when: what a run records about it.</summary>
    public RelayFaultReport Report() => new(options.Fault.ToString(), FaultInjected, options.FaultAfterBytes, BytesFromServer,
        BytesForwarded, _faultAt?.TotalSeconds);

    /// <summary>Listens (a TCP port, or a Unix socket whose stale file is replaced); returns where.</summary>
    public EndPoint Start()
    {
        switch (options.Listen)
        {
            case UnixDomainSocketEndPoint unix:
                _listener = new UnixStreamListener(unix.ToString());
                return unix;
            case IPEndPoint ip:
                var tcp = new TcpStreamListener(ip.Address.ToString(), ip.Port);
                _listener = tcp;
                return tcp.LocalEndPoint;
            default:
                throw new IntegrationException(ErrorCodes.InvalidParameter, $"The relay cannot listen on {options.Listen}.");
        }
    }

    /// <summary>Accepts and forwards connections until cancelled (the stream servers' accept loop); then closes them all.</summary>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _stop.Token);
        await new AcceptLoop(_listener ?? throw new InvalidOperationException("Start the relay first."), int.MaxValue, int.MaxValue).RunAsync((client, _, token) =>
        {
            Interlocked.Increment(ref _connections);
            return ForwardAsync(client.Socket!, token);
        }, stop.Token).ConfigureAwait(false);
    }

    private async Task ForwardAsync(Socket client, CancellationToken cancellationToken)
    {
        using var connection = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var cut = new FaultCut();
        var toUnix = options.TargetPath is { Length: > 0 };
        using (client)
        using (var server = toUnix ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified) : new Socket(SocketType.Stream, ProtocolType.Tcp))
        {
            if (client.AddressFamily != AddressFamily.Unix)
                client.NoDelay = true;
            if (!toUnix)
                server.NoDelay = true;
            try
            {
                using (var connect = CancellationTokenSource.CreateLinkedTokenSource(connection.Token))
                {
                    connect.CancelAfter(options.ConnectTimeout);
                    if (toUnix)
                        await server.ConnectAsync(new UnixDomainSocketEndPoint(options.TargetPath!), connect.Token).ConfigureAwait(false);
                    else
                        await server.ConnectAsync(options.TargetHost, options.TargetPort, connect.Token).ConfigureAwait(false);
                }
                await Task.WhenAll(PumpAsync(client, server, connection, cut, fromServer: false),
                    PumpAsync(server, client, connection, cut, fromServer: true)).ConfigureAwait(false);
            }
            // One connection's end, however it comes, never ends the relay for the others (a socket the fault closed under a pump
            // surfaces as ObjectDisposedException: seen with RabbitMQ's two-way traffic).
            catch (Exception e)
            {
                // A connection the relay cut on purpose (the injected reset) ends in errors that are no news.
                if (!cancellationToken.IsCancellationRequested && e is not OperationCanceledException && !cut.ByFault)
                    log.Warning(ErrorCodes.ConnectionLost, $"Relay: a connection to {options.Target} ended: {e.Message}");
                Abort(client);
                Abort(server);
            }
        }
    }

    /// <summary>A chunk to pass on; <paramref name="Fault"/> is done right after it (the chunk ends where the threshold was crossed).</summary>
    private readonly record struct Chunk(byte[] Buffer, int Length, long Due, RelayFaultKind Fault = RelayFaultKind.None);

    /// <summary>Set when the relay itself cut a connection (the injected reset).</summary>
    private sealed class FaultCut
    {
        public volatile bool ByFault;
    }

    /// <summary>One direction: a reader stamps each chunk with when it may leave, a writer sends it then; a bounded queue between.</summary>
    private async Task PumpAsync(Socket from, Socket to, CancellationTokenSource connection, FaultCut cut, bool fromServer)
    {
        var token = connection.Token;
        var held = Channel.CreateBounded<Chunk>(new BoundedChannelOptions(Math.Max(1, options.MaxHeldBytes / ChunkBytes))
            { SingleReader = true, SingleWriter = true });

        async Task ReadAsync()
        {
            while (true)
            {
                var buffer = ArrayPool<byte>.Shared.Rent(ChunkBytes);
                int read;
                try
                {
                    read = await from.ReceiveAsync(buffer.AsMemory(0, ChunkBytes), SocketFlags.None, token).ConfigureAwait(false);
                }
                catch
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                    throw;
                }
                if (read == 0)
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                    held.Writer.Complete();
                    return;
                }
                var due = Stopwatch.GetTimestamp() + Ticks(options.OneWayDelay);
                var before = read;
                var fault = fromServer ? NextFault(read, out before) : RelayFaultKind.None;
                if (fault is RelayFaultKind.None or RelayFaultKind.Silence)
                {
                    await held.Writer.WriteAsync(new Chunk(buffer, read, due), token).ConfigureAwait(false);
                    continue;
                }
                // Reset or KillServer: the server's bytes up to the threshold go on, then the fault, and nothing after it is
                // relayed — unless the connection is not the server's (a broker's), which loses no byte and is not cut.
                var cuts = fault == RelayFaultKind.Reset || (fault == RelayFaultKind.KillServer && options.CutOnKill);
                await held.Writer.WriteAsync(new Chunk(buffer, cuts ? before : read, due, fault), token).ConfigureAwait(false);
                if (cuts)
                {
                    held.Writer.Complete();
                    return;
                }
            }
        }

        async Task WriteAsync()
        {
            await foreach (var chunk in held.Reader.ReadAllAsync(token).ConfigureAwait(false))
            {
                try
                {
                    await WaitUntilAsync(chunk.Due, token).ConfigureAwait(false);
                    // A silence (started when the threshold was read) holds both directions.
                    await WaitUntilAsync(Volatile.Read(ref _silentUntil), token).ConfigureAwait(false);
                    Interlocked.Add(ref _forwarded, chunk.Length);
                    if (chunk.Length > 0)
                        await to.SendAsync(chunk.Buffer.AsMemory(0, chunk.Length), SocketFlags.None, token).ConfigureAwait(false);
                    if (chunk.Fault == RelayFaultKind.None)
                        continue;
                    if (chunk.Fault == RelayFaultKind.RestartBroker)
                    {
                        await StopBrokerAsync(token).ConfigureAwait(false);
                        continue;
                    }
                    if (chunk.Fault == RelayFaultKind.KillServer)
                    {
                        await KillServerAsync(token).ConfigureAwait(false);
                        if (!options.CutOnKill)
                            continue;
                    }
                    else
                        log.Warning(ErrorCodes.FaultInjected, $"Relay: fault injected, connection reset after {options.FaultAfterBytes:N0} bytes from the server.");
                    cut.ByFault = true;
                    Abort(from);
                    Abort(to);
                    await connection.CancelAsync().ConfigureAwait(false);
                    return;
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(chunk.Buffer);
                }
            }
            // The sender finished: pass its end on, after the last byte.
            to.Shutdown(SocketShutdown.Send);
        }

        try
        {
            await TaskGroup.WhenAllOrFirstFailure(connection, ReadAsync(), WriteAsync()).ConfigureAwait(false);
        }
        finally
        {
            while (held.Reader.TryRead(out var left))
                ArrayPool<byte>.Shared.Return(left.Buffer);
        }
    }

    /// <summary>The process id in <see cref="RelayOptions.KillPidFile"/> at this moment (the server's or the broker's current one).</summary>
    private int ReadPid() => int.Parse(File.ReadAllText(options.KillPidFile ?? throw new InvalidOperationException("no KillPidFile")).Trim(),
        System.Globalization.CultureInfo.InvariantCulture);

    private async Task StopBrokerAsync(CancellationToken token)
    {
        try
        {
            int pid;
            if (options.StopBrokerThere is { } stopThere)
                pid = await stopThere(token).ConfigureAwait(false);
            else
            {
                pid = ReadPid();
                if (!ProcessTree.Signal(pid, ProcessTree.SigTerm))
                    throw new InvalidOperationException($"process {pid} could not be signalled");
            }
            log.Warning(ErrorCodes.FaultInjected, $"Relay: fault injected, broker process {pid} asked to stop (SIGTERM) after {options.FaultAfterBytes:N0} bytes from it.");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or InvalidOperationException or IntegrationException)
        {
            log.Error(ErrorCodes.FaultInjected, $"Relay: the RestartBroker fault could not stop the broker ({options.KillPidFile ?? "on its machine"}): {e.Message}");
        }
    }

    private async Task KillServerAsync(CancellationToken token)
    {
        try
        {
            int pid;
            if (options.KillServerThere is { } killThere)
                pid = await killThere(token).ConfigureAwait(false);
            else
            {
                pid = ReadPid();
                using var process = Process.GetProcessById(pid);
                process.Kill(entireProcessTree: true);
            }
            log.Warning(ErrorCodes.FaultInjected, $"Relay: fault injected, server process {pid} killed after {options.FaultAfterBytes:N0} bytes from the server.");
        }
        catch (Exception e) when (e is IOException or FormatException or ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception or IntegrationException)
        {
            log.Error(ErrorCodes.FaultInjected, $"Relay: the KillServer fault could not kill the server ({options.KillPidFile ?? "on its machine"}): {e.Message}");
        }
    }

    /// <summary>
    /// Counts a chunk taken from the server; if it crosses the fault's threshold (and the fault has not happened), says which fault and
    /// how many of its bytes come before the threshold. A silence starts here, when the threshold is read.
    /// </summary>
    private RelayFaultKind NextFault(int length, out int before)
    {
        var total = Interlocked.Add(ref _fromServer, length);
        before = length;
        if (options.Fault == RelayFaultKind.None || total < options.FaultAfterBytes || Interlocked.CompareExchange(ref _faultDone, 1, 0) != 0)
            return RelayFaultKind.None;
        before = (int)Math.Clamp(options.FaultAfterBytes - (total - length), 0, length);
        _faultAt = _sinceStart.Elapsed;
        if (options.Fault == RelayFaultKind.Silence)
        {
            Volatile.Write(ref _silentUntil, Stopwatch.GetTimestamp() + Ticks(options.Silence));
            log.Warning(ErrorCodes.FaultInjected,
                $"Relay: fault injected, {options.Silence.TotalSeconds:F1} s of silence after {options.FaultAfterBytes:N0} bytes from the server.");
        }
        return options.Fault;
    }

    private static long Ticks(TimeSpan span) => (long)(span.TotalSeconds * Stopwatch.Frequency);

    /// <summary>Sleeps most of the way, then spins: timers are about a millisecond coarse, and a 2014 LAN's delay is a tenth of that.</summary>
    internal static async ValueTask WaitUntilAsync(long dueTimestamp, CancellationToken cancellationToken)
    {
        while (true)
        {
            var remaining = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), dueTimestamp);
            if (remaining <= TimeSpan.Zero)
                return;
            if (remaining > TimeSpan.FromMilliseconds(2))
                await Task.Delay(remaining - TimeSpan.FromMilliseconds(1.5), cancellationToken).ConfigureAwait(false);
            else
            {
                cancellationToken.ThrowIfCancellationRequested();
                Thread.SpinWait(50);
            }
        }
    }

    private static void Abort(Socket socket)
    {
        try
        {
            // Linger 0: close sends RST, as a broken network or a crashed peer would be seen (a Unix socket has no RST: its peer
            // sees the end mid-frame, which a client tells from a clean end just the same).
            if (socket.AddressFamily != AddressFamily.Unix)
                socket.LingerState = new LingerOption(true, 0);
            socket.Close();
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        if (_listener is not null)
            await _listener.DisposeAsync().ConfigureAwait(false);
        _stop.Dispose();
    }
}
