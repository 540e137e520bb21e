using System.IO.Pipelines;
using IntegrationTasks.Common;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace IntegrationTasks.Host;

/// <summary>
/// Kestrel's side of a silent network: a connection on which nothing moves either way for the timeout (a client idle, or stalled
/// mid-request with its connection left open) is aborted with a coded warning (IT3007), as the suite's TCP and net.tcp servers do.
/// Traffic in either direction counts, so a long response that is still flowing is never cut.
/// </summary>
internal static class StallGuard
{
    private const string GuardedByProtocolKey = "IntegrationTasks.GuardedByProtocol";
    private const string RequestSeenKey = "IntegrationTasks.RequestSeen";

    /// <summary>How much longer this guard waits on a connection whose protocol has a guard of its own that can say why.</summary>
    private static readonly TimeSpan ProtocolGrace = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The connection's protocol drops a stalled peer itself and tells it why (a WebSocket's close frame, 1008 and IT3007): this guard
    /// then stays the backstop, a grace later, rather than resetting the connection first.
    /// </summary>
    public static void LeaveToProtocol(HttpContext context)
    {
        if (context.Features.Get<Microsoft.AspNetCore.Connections.Features.IConnectionItemsFeature>()?.Items.TryGetValue(GuardedByProtocolKey, out var flag) == true)
            ((ConnectionFlag)flag!).Set();
    }

    /// <summary>Connections whose TLS handshake succeeded (Kestrel's event, <see cref="KestrelEvents"/>), until they end.</summary>
    private static readonly System.Collections.Concurrent.ConcurrentDictionary<string, bool> TlsEstablished = new(StringComparer.Ordinal);

    /// <summary>Kestrel completed the connection's TLS handshake.</summary>
    public static void MarkTlsEstablished(string connectionId) => TlsEstablished[connectionId] = true;

    /// <summary>Kestrel's own coded event told what became of the connection.</summary>
    public static void ForgetTls(string connectionId) => TlsEstablished.TryRemove(connectionId, out _);

    /// <summary>The first middleware: the connection carried a request (one that did not, after a TLS handshake, is told below).</summary>
    public static Task MarkRequestAsync(HttpContext context, Func<Task> next)
    {
        if (context.Features.Get<Microsoft.AspNetCore.Connections.Features.IConnectionItemsFeature>()?.Items.TryGetValue(RequestSeenKey, out var flag) == true)
            ((ConnectionFlag)flag!).Set();
        return next();
    }

    /// <summary>Put in the connection's items when it opens, so that the watchdog reads a field, never the dictionary the request writes.</summary>
    private sealed class ConnectionFlag
    {
        private volatile bool _set;
        public bool IsSet => _set;
        public void Set() => _set = true;
    }

    public static void Use(ListenOptions listen, TimeSpan timeout, ILogger log) =>
        listen.Use(next => async connection =>
        {
            var traffic = new TrafficClock();
            var guardedByProtocol = new ConnectionFlag();
            var requestSeen = new ConnectionFlag();
            connection.Items[GuardedByProtocolKey] = guardedByProtocol;
            connection.Items[RequestSeenKey] = requestSeen;
            var transport = connection.Transport;
            connection.Transport = new DuplexPipe(new WatchedReader(transport.Input, traffic), new WatchedWriter(transport.Output, traffic));
            using var watching = new CancellationTokenSource();
            var watchdog = WatchAsync(connection, traffic, guardedByProtocol, timeout, log, watching.Token);
            try
            {
                await next(connection).ConfigureAwait(false);
                // One line per client served (its server task shows it; a person watching a server started by hand sees it).
                Console.WriteLine($"Connection from {connection.RemoteEndPoint} finished.");
            }
            finally
            {
                await watching.CancelAsync().ConfigureAwait(false);
                var dropped = await watchdog.ConfigureAwait(false);
                connection.Transport = transport;
                // A .NET client judges the certificate after its side of the handshake: one that refused it ends the connection
                // then, before any request, and Kestrel itself says nothing of it.
                if (TlsEstablished.TryRemove(connection.ConnectionId, out _) && !dropped && !requestSeen.IsSet)
                    log.LogWarning("{Code}: the connection from {Peer} ended right after its TLS handshake, before any request: did the client refuse this server's certificate?",
                        ErrorCodes.TlsRefused, connection.RemoteEndPoint);
            }
        });

    /// <summary>Whether it dropped the connection.</summary>
    private static async Task<bool> WatchAsync(ConnectionContext connection, TrafficClock traffic, ConnectionFlag guardedByProtocol, TimeSpan timeout, ILogger log,
        CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                var quiet = traffic.QuietFor;
                var limit = guardedByProtocol.IsSet ? timeout + ProtocolGrace : timeout;
                if (quiet >= limit)
                {
                    log.LogWarning("{Code}: dropped the connection from {Peer}: nothing moved either way for {Seconds:0.###} s (ConnectionTimeoutSeconds{Grace}).",
                        ErrorCodes.ConnectionStalled, connection.RemoteEndPoint, limit.TotalSeconds, guardedByProtocol.IsSet ? ", and a grace for the protocol's own guard" : "");
                    connection.Abort(new ConnectionAbortedException("Stalled beyond ConnectionTimeoutSeconds."));
                    return true;
                }
                await Task.Delay(limit - quiet, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    private sealed class TrafficClock
    {
        private long _last = Environment.TickCount64;
        public void Moved() => Volatile.Write(ref _last, Environment.TickCount64);
        public TimeSpan QuietFor => TimeSpan.FromMilliseconds(Environment.TickCount64 - Volatile.Read(ref _last));
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input => input;
        public PipeWriter Output => output;
    }

    /// <summary>The transport's reader, noting when bytes arrive.</summary>
    private sealed class WatchedReader(PipeReader inner, TrafficClock traffic) : PipeReader
    {
        public override async ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
        {
            var result = await inner.ReadAsync(cancellationToken).ConfigureAwait(false);
            traffic.Moved();
            return result;
        }

        public override bool TryRead(out ReadResult result)
        {
            if (!inner.TryRead(out result))
                return false;
            traffic.Moved();
            return true;
        }

        public override void AdvanceTo(SequencePosition consumed) => inner.AdvanceTo(consumed);
        public override void AdvanceTo(SequencePosition consumed, SequencePosition examined) => inner.AdvanceTo(consumed, examined);
        public override void CancelPendingRead() => inner.CancelPendingRead();
        public override void Complete(Exception? exception = null) => inner.Complete(exception);
        public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
    }

    /// <summary>The transport's writer, noting when bytes leave.</summary>
    private sealed class WatchedWriter(PipeWriter inner, TrafficClock traffic) : PipeWriter
    {
        public override async ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
        {
            var result = await inner.FlushAsync(cancellationToken).ConfigureAwait(false);
            traffic.Moved();
            return result;
        }

        public override void Advance(int bytes) => inner.Advance(bytes);
        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);
        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);
        public override void CancelPendingFlush() => inner.CancelPendingFlush();
        public override void Complete(Exception? exception = null) => inner.Complete(exception);
        public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
        public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;
        public override long UnflushedBytes => inner.UnflushedBytes;
    }
}
