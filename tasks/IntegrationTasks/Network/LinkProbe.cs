using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace IntegrationTasks.Network;

/// <summary>What the link between two hosts gives, measured once before the runs: what the user's results stand on.</summary>
/// <param name="RoundTripMs">Median of <see cref="LinkProbe.RoundTrips"/> one-byte round trips over one TCP connection.</param>
/// <param name="RoundTripP99Ms">Their 99th percentile.</param>
/// <param name="Mbits">What one TCP connection carried one way for <see cref="LinkProbe.BulkTime"/>, in Mbit/s.</param>
public sealed record LinkMeasurement(double RoundTripMs, double RoundTripP99Ms, double Mbits)
{
    public override string ToString() => string.Create(CultureInfo.InvariantCulture,
        $"round trip {RoundTripMs:0.###} ms (median of {LinkProbe.RoundTrips:N0}; p99 {RoundTripP99Ms:0.###} ms), {Mbits:N0} Mbit/s one way (one TCP connection, {LinkProbe.BulkTime.TotalSeconds:0.#} s); the link itself, before any round trip the relay adds");
}

/// <summary>
/// Measures the link between the server's and the client's network namespaces from this process: a socket made inside a
/// namespace stays in it (setns on a thread of its own while it is made), so both ends run here without a process on either side.
/// </summary>
public static class LinkProbe
{
    public const int RoundTrips = 1000;
    public static readonly TimeSpan BulkTime = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(20);
    private const int NetworkNamespace = 0x40000000; // CLONE_NEWNET

    /// <summary>
    /// The client host listens (on its own address, for this one connection, checked to be the probe's own) and the server host
    /// connects: nothing of the probe listens on the server host, whose doors the suite keeps shut. Records flow from server to
    /// client, so the bulk is sent that way.
    /// </summary>
    public static async Task<LinkMeasurement> MeasureAsync(string serverNamespace, string clientNamespace, string clientAddress, CancellationToken cancellationToken)
    {
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        limit.CancelAfter(Limit);
        var token = limit.Token;
        var address = IPAddress.Parse(clientAddress);
        Socket clientEnd;
        Socket serverEnd;
        using (var listener = InNamespace(clientNamespace, () =>
               {
                   var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                   try
                   {
                       socket.Bind(new IPEndPoint(address, 0));
                       socket.Listen(1);
                       return socket;
                   }
                   catch
                   {
                       socket.Dispose();
                       throw;
                   }
               }))
        {
            serverEnd = InNamespace(serverNamespace, () => new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true });
            try
            {
                var accepting = listener.AcceptAsync(token).AsTask();
                await serverEnd.ConnectAsync(listener.LocalEndPoint!, token).ConfigureAwait(false);
                clientEnd = await accepting.ConfigureAwait(false);
            }
            catch (Exception e) when (e is SocketException or OperationCanceledException)
            {
                serverEnd.Dispose();
                throw Failed(e, cancellationToken);
            }
        }
        try
        {
            using (serverEnd)
            using (clientEnd)
            {
                if (!Equals(clientEnd.RemoteEndPoint, serverEnd.LocalEndPoint))
                    throw new SocketException((int)SocketError.ConnectionRefused); // someone else's connection: not measured
                clientEnd.NoDelay = true;
                var (median, p99) = await RoundTripAsync(clientEnd, serverEnd, token).ConfigureAwait(false);
                var mbits = await BulkAsync(serverEnd, clientEnd, token).ConfigureAwait(false);
                return new LinkMeasurement(median, p99, mbits);
            }
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException)
        {
            throw Failed(e, cancellationToken);
        }
    }

    /// <summary>The caller's cancellation as it is; anything else (the time limit among them) as the probe's coded failure.</summary>
    private static Exception Failed(Exception e, CancellationToken cancellationToken) =>
        cancellationToken.IsCancellationRequested ? new OperationCanceledException(cancellationToken)
            : new IntegrationException(ErrorCodes.NetworkSetupFailed, $"The link between the hosts could not be measured: {e.Message}", e);

    private static async Task<(double Median, double P99)> RoundTripAsync(Socket pinging, Socket echoing, CancellationToken token)
    {
        var echo = Task.Run(async () =>
        {
            var one = new byte[1];
            while (await echoing.ReceiveAsync(one, token).ConfigureAwait(false) == 1 && one[0] != 0)
                await echoing.SendAsync(one, token).ConfigureAwait(false);
        }, token);
        var times = await PingAsync(pinging, token).ConfigureAwait(false);
        await pinging.SendAsync(new byte[] { 0 }, token).ConfigureAwait(false);
        await echo.ConfigureAwait(false);
        return times;
    }

    /// <summary>One-byte round trips against an echo at the other end: their median and 99th percentile.</summary>
    private static async Task<(double Median, double P99)> PingAsync(Socket pinging, CancellationToken token)
    {
        var ping = new byte[] { 1 };
        var times = new double[RoundTrips];
        for (var i = -RoundTrips / 10; i < RoundTrips; i++) // the first tenth warms the path up, untimed
        {
            var started = Stopwatch.GetTimestamp();
            await pinging.SendAsync(ping, token).ConfigureAwait(false);
            if (await pinging.ReceiveAsync(ping, token).ConfigureAwait(false) != 1)
                throw new SocketException((int)SocketError.ConnectionReset);
            if (i >= 0)
                times[i] = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        }
        Array.Sort(times);
        return (times[RoundTrips / 2], times[RoundTrips * 99 / 100]);
    }

    /// <summary>What <paramref name="from"/> gets across to <paramref name="to"/>.</summary>
    private static async Task<double> BulkAsync(Socket from, Socket to, CancellationToken token)
    {
        using var sending = CancellationTokenSource.CreateLinkedTokenSource(token);
        var chunk = new byte[64 * 1024];
        var sender = Task.Run(async () =>
        {
            try
            {
                while (!sending.IsCancellationRequested)
                    await from.SendAsync(chunk, sending.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException && sending.IsCancellationRequested && !token.IsCancellationRequested)
            {
                // the measured second is over
            }
        }, token);
        var mbits = await ReceiveBulkAsync(to, () => sender.IsFaulted ? sender.Exception?.InnerException : null, token).ConfigureAwait(false);
        await sending.CancelAsync().ConfigureAwait(false);
        await sender.ConfigureAwait(false);
        return mbits;
    }

    /// <summary>Reads what the other end sends without pause: after a warm-up, what one <see cref="BulkTime"/> carried, in Mbit/s.</summary>
    private static async Task<double> ReceiveBulkAsync(Socket to, Func<Exception?> senderFailure, CancellationToken token)
    {
        var buffer = new byte[256 * 1024];
        long received = 0;
        var warmUp = TimeSpan.FromMilliseconds(200);
        var started = Stopwatch.GetTimestamp();
        long countedFrom = 0;
        TimeSpan counting = default;
        while (true)
        {
            var read = await to.ReceiveAsync(buffer, token).ConfigureAwait(false);
            if (read == 0 || senderFailure() is not null)
                throw senderFailure() ?? new SocketException((int)SocketError.ConnectionReset);
            received += read;
            var elapsed = Stopwatch.GetElapsedTime(started);
            if (counting == default && elapsed >= warmUp)
                (counting, countedFrom) = (elapsed, received);
            if (counting != default && elapsed - counting >= BulkTime)
                return (received - countedFrom) * 8 / (elapsed - counting).TotalSeconds / 1e6;
        }
    }

    /// <summary>
    /// The link to another machine, measured as between two hosts: this machine listens (on the address the machine's ssh session
    /// came from, for the machine's own two connections, each checked to come from it) and the machine connects with its shell's
    /// <c>/dev/tcp</c> — first an echo (<c>cat</c>) for the round trips, then an endless stream for the throughput. Nothing of the
    /// probe listens there, and nothing of the suite's is run there but bash and cat.
    /// </summary>
    public static async Task<LinkMeasurement> AcrossAsync(Hosting.Remote.SshMachine machine, CancellationToken cancellationToken)
    {
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        limit.CancelAfter(Limit);
        var token = limit.Token;
        try
        {
            // SSH_CONNECTION there: "this machine's address, its port, that machine's address, its port", as that machine sees them.
            var said = await machine.RunAsync(["sh", "-c", "echo $SSH_CONNECTION"], Limit, token).ConfigureAwait(false);
            var words = said.Output.Trim().Split(' ');
            if (words.Length < 3 || !IPAddress.TryParse(words[0], out var here) || !IPAddress.TryParse(words[2], out var there))
                throw new SocketException((int)SocketError.AddressNotAvailable);
            using var listener = new Socket(here.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(here, 0));
            listener.Listen(2);
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            // The stream's cat ends on the broken pipe as an error, not by the signal: ssh would report a signal as its own failure.
            var script = $"trap '' PIPE; exec 3<>/dev/tcp/{here}/{port} && cat <&3 >&3; exec 3>&-; exec 4<>/dev/tcp/{here}/{port} && cat /dev/zero >&4 2>/dev/null; exit 0";
            var remote = machine.RunAsync(["bash", "-c", script], Limit, token);
            try
            {
                using var echo = await AcceptFromAsync(listener, there, token).ConfigureAwait(false);
                var (median, p99) = await PingAsync(echo, token).ConfigureAwait(false);
                echo.Shutdown(SocketShutdown.Send); // its cat reads the end and ends
                double mbits;
                using (var bulk = await AcceptFromAsync(listener, there, token).ConfigureAwait(false))
                    mbits = await ReceiveBulkAsync(bulk, () => null, token).ConfigureAwait(false);
                // Closed, the stream's cat there ends on its broken pipe, and the command with it.
                await remote.ConfigureAwait(false);
                return new LinkMeasurement(median, p99, mbits);
            }
            catch when (!remote.IsCompleted)
            {
                // The probe failed here: the command there is ended (its ssh killed) before the failure is reported.
                await limit.CancelAsync().ConfigureAwait(false);
                await Task.WhenAny(remote).ConfigureAwait(false);
                throw;
            }
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException)
        {
            throw cancellationToken.IsCancellationRequested ? new OperationCanceledException(cancellationToken)
                : new IntegrationException(ErrorCodes.NetworkSetupFailed, $"The link to {machine.Destination} could not be measured: {e.Message}", e);
        }
    }

    /// <summary>The next connection, refused unless it comes from <paramref name="from"/> (someone else's is not measured).</summary>
    private static async Task<Socket> AcceptFromAsync(Socket listener, IPAddress from, CancellationToken token)
    {
        var accepted = await listener.AcceptAsync(token).ConfigureAwait(false);
        if (((IPEndPoint)accepted.RemoteEndPoint!).Address.Equals(from))
        {
            accepted.NoDelay = true;
            return accepted;
        }
        accepted.Dispose();
        throw new SocketException((int)SocketError.ConnectionRefused);
    }

    /// <summary>Makes something (a socket) inside a network namespace, on a thread of its own that enters it and comes back.</summary>
    private static T InNamespace<T>(string name, Func<T> make)
    {
        T? made = default;
        Exception? failed = null;
        var thread = new Thread(() =>
        {
            try
            {
                using var here = File.OpenHandle("/proc/thread-self/ns/net");
                using var there = File.OpenHandle($"/var/run/netns/{name}");
                Enter(there);
                made = make();
                // Back before the thread ends (it would end in the other namespace: harmless, but said plainly).
                try
                {
                    Enter(here);
                }
                catch (InvalidOperationException)
                {
                    (made as IDisposable)?.Dispose();
                    throw;
                }
            }
            catch (Exception e)
            {
                // Anything thrown on a thread of its own would end the process: it is handed back to the caller.
                failed = e;
            }
        });
        thread.Start();
        thread.Join();
        if (failed is IOException or UnauthorizedAccessException or SocketException or InvalidOperationException)
            throw new IntegrationException(ErrorCodes.NetworkSetupFailed, $"Could not open a socket in {name}: {failed.Message}", failed);
        if (failed is not null)
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(failed).Throw();
        return made!;
    }

    private static void Enter(Microsoft.Win32.SafeHandles.SafeFileHandle ns)
    {
        if (SetNamespace((int)ns.DangerousGetHandle(), NetworkNamespace) != 0)
            throw new InvalidOperationException($"setns failed ({Marshal.GetLastPInvokeError()})");
    }

    [DllImport("libc", EntryPoint = "setns", SetLastError = true)]
    private static extern int SetNamespace(int fd, int type);
}
