using System.Net;
using System.Net.Sockets;

namespace IntegrationTasks.Streams;

/// <summary>
/// One accepted or opened connection as a stream (in the spirit of Kestrel's transports: the models above see a duplex stream,
/// never the socket), with who is at the other end and a way to say "no more from me" while still reading.
/// </summary>
public sealed class StreamConnection(Stream stream, string peer, Action shutdownSend, Socket? socket = null,
    Func<IntegrationException, Task>? closeWithError = null, bool tls = false) : IAsyncDisposable
{
    public Stream Stream { get; } = stream;
    public string Peer { get; } = peer;

    /// <summary>The stream carries TLS (its handshake done).</summary>
    public bool Tls { get; } = tls;

    /// <summary>The socket beneath, for what works on sockets themselves (the delay relay's pumps and its reset); null for another stream.</summary>
    public Socket? Socket { get; } = socket;

    /// <summary>Ends what this side sends (a socket's shutdown of its send direction); reading goes on.</summary>
    public void ShutdownSend() => shutdownSend();

    /// <summary>
    /// Tells the peer why the connection ends, where the stream has a way to (a WebSocket's close code and reason); a socket has
    /// none, and simply closes. Never throws: the peer may be gone already.
    /// </summary>
    public Task CloseWithErrorAsync(IntegrationException error) => closeWithError?.Invoke(error) ?? Task.CompletedTask;

    /// <summary>
    /// Closes the connection at once with a reset: what the peer has not read is dropped and the peer is told, where a graceful close
    /// would keep it queued for as long as the peer does not read. A stream with no socket beneath is left to its own close.
    /// </summary>
    public void Reset()
    {
        try
        {
            Socket?.Close(timeout: 0);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // closed already
        }
    }

    public ValueTask DisposeAsync() => Stream.DisposeAsync();

    /// <summary>A connected socket as a stream connection (the stream owns the socket).</summary>
    public static StreamConnection Of(Socket socket, string peer) =>
        new(new NetworkStream(socket, ownsSocket: true), peer, () => socket.Shutdown(SocketShutdown.Send), socket);
}

/// <summary>Where a server takes its connections from: bound when made (a taken address fails there), accepting until disposed.</summary>
public interface IStreamListener : IAsyncDisposable
{
    /// <summary>The address as clients reach it: tcp://127.0.0.1:8081, unix:///path/to.sock.</summary>
    string Endpoint { get; }

    ValueTask<StreamConnection> AcceptAsync(CancellationToken cancellationToken);
}

/// <summary>How a client opens its connection; a failure is IT3003 naming the server target to start.</summary>
public interface IStreamConnector
{
    string Endpoint { get; }

    Task<StreamConnection> ConnectAsync(string serverTarget, CancellationToken cancellationToken);
}

/// <summary>The stream connectors the suite has: TCP (the series') and Unix domain sockets (the seam's proof: same models, no TCP).</summary>
public enum Connector
{
    Tcp,
    Unix,
}

public static class StreamConnections
{
    /// <summary>Connection resets and aborts are how peers leave; they are not server faults.</summary>
    public static bool IsDisconnect(Exception e) =>
        e is IOException { InnerException: SocketException } or SocketException or ObjectDisposedException;

    public static Connector Parse(string name) =>
        Enum.TryParse<Connector>(name, ignoreCase: true, out var connector) && Enum.IsDefined(connector)
            ? connector
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"Connector must be Tcp or Unix (was '{name}').");
}

public sealed class TcpStreamListener : IStreamListener
{
    private readonly TcpListener _listener;

    public TcpStreamListener(string bindAddress, int port)
    {
        _listener = Hosting.Ports.Listen(bindAddress, port);
        LocalEndPoint = (IPEndPoint)_listener.LocalEndpoint;
    }

    public IPEndPoint LocalEndPoint { get; }
    public string Endpoint => $"tcp://{LocalEndPoint}";

    public async ValueTask<StreamConnection> AcceptAsync(CancellationToken cancellationToken)
    {
        var socket = await _listener.AcceptSocketAsync(cancellationToken).ConfigureAwait(false);
        socket.NoDelay = true;
        return StreamConnection.Of(socket, socket.RemoteEndPoint?.ToString() ?? "?");
    }

    public ValueTask DisposeAsync()
    {
        _listener.Stop();
        return ValueTask.CompletedTask;
    }
}

public sealed class TcpConnector(string host, int port) : IStreamConnector
{
    public string Endpoint => $"tcp://{host}:{port}";

    public async Task<StreamConnection> ConnectAsync(string serverTarget, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(host, port, cancellationToken).ConfigureAwait(false);
            return StreamConnection.Of(socket, Endpoint);
        }
        catch (SocketException e)
        {
            socket.Dispose();
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"Cannot connect to {host}:{port} ({e.SocketErrorCode}). Is the server running? Start it with: dotnet msbuild build.proj -t:{serverTarget}", e);
        }
    }
}

/// <summary>
/// A Unix domain socket at a path: a socket file left by a server that died is removed when nothing answers on it; one a live
/// server holds is IT1004, as a taken TCP port is. The file is removed when the listener stops.
/// </summary>
public sealed class UnixStreamListener : IStreamListener
{
    private readonly Socket _socket;
    private readonly string _path;

    public UnixStreamListener(string path)
    {
        _path = Path.GetFullPath(path);
        Directory.CreateDirectory(Path.GetDirectoryName(_path)!);
        if (File.Exists(_path))
        {
            if (Answers(_path))
                throw new IntegrationException(ErrorCodes.PortInUse, $"{_path} is already served by another process (a server left running?).");
            File.Delete(_path);
        }
        _socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            _socket.Bind(new UnixDomainSocketEndPoint(_path));
            _socket.Listen(512);
        }
        catch (SocketException e)
        {
            _socket.Dispose();
            throw new IntegrationException(ErrorCodes.PortInUse, $"Cannot listen on {_path} ({e.SocketErrorCode}).", e);
        }
    }

    public string Endpoint => $"unix://{_path}";

    private static bool Answers(string path)
    {
        using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            probe.Connect(new UnixDomainSocketEndPoint(path));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    private long _accepted;

    public async ValueTask<StreamConnection> AcceptAsync(CancellationToken cancellationToken)
    {
        var socket = await _socket.AcceptAsync(cancellationToken).ConfigureAwait(false);
        // A Unix peer has no address of its own: it is named by its turn.
        return StreamConnection.Of(socket, $"unix peer {Interlocked.Increment(ref _accepted)}");
    }

    public ValueTask DisposeAsync()
    {
        _socket.Dispose();
        try
        {
            File.Delete(_path);
        }
        catch (IOException)
        {
        }
        return ValueTask.CompletedTask;
    }
}

public sealed class UnixConnector(string path) : IStreamConnector
{
    public string Endpoint => $"unix://{Path.GetFullPath(path)}";

    public async Task<StreamConnection> ConnectAsync(string serverTarget, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(Path.GetFullPath(path)), cancellationToken).ConfigureAwait(false);
            return StreamConnection.Of(socket, Endpoint);
        }
        catch (SocketException e)
        {
            socket.Dispose();
            throw new IntegrationException(ErrorCodes.ConnectionFailed,
                $"Cannot connect to {Endpoint} ({e.SocketErrorCode}). Is the server running? Start it with: dotnet msbuild build.proj -t:{serverTarget} -p:Connector=Unix", e);
        }
    }
}
