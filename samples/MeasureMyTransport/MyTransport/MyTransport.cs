using System.Net;
using System.Net.Sockets;
using System.Runtime.ExceptionServices;
using IntegrationTasks.Abstractions;

namespace MyTransport;

/// <summary>
/// A transport of our own: length-prefixed frames over TCP (the seam's RecordFrames), up to MaxInFlight batches asked for at once on
/// one connection, answered in order by a server that reads each batch from ServiceTable as every server of the suite does.
/// </summary>
public sealed class MyTransport : Transport
{
    public override string Name => "MyTransport";

    public override TransportCapabilities Capabilities =>
        TransportCapabilities.ManyClients | TransportCapabilities.Resumes | TransportCapabilities.Pipelines;

    /// <summary>How long a reply may take before the connection counts as lost (Settings="ReplyTimeoutSeconds=30").</summary>
    public static readonly TransportSetting<int> ReplyTimeoutSeconds = new("ReplyTimeoutSeconds", 10, "a whole number of seconds above 0", seconds => seconds > 0);

    public override IReadOnlyCollection<TransportSetting> Settings => [ReplyTimeoutSeconds];

    public override TransportClient CreateClient() => new MyClient();

    public override TransportServer CreateServer() => new MyServer();
}

public sealed class MyClient : TransportClient
{
    public override async Task TransferAsync(ClientSession session, CancellationToken cancellationToken)
    {
        var replyTimeout = TimeSpan.FromSeconds(session.ValueOf(MyTransport.ReplyTimeoutSeconds));
        // The suite opens the connection and counts the bytes through it (the report's bytes columns).
        await using var stream = await session.ConnectAsync(cancellationToken);
        using var window = new SemaphoreSlim(session.MaxInFlight);
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var asking = AskAsync(session, stream, window, failed);
        try
        {
            foreach (var expected in session.Batches)
            {
                var reply = await ReadReplyAsync(stream, session.MaxFrameBytes, replyTimeout, failed.Token);
                if (reply.BatchIndex != expected.Index)
                    throw new TransportException(TransportError.MalformedMessage, $"Batch {reply.BatchIndex} came while batch {expected.Index} was next.");
                await session.WriteAsync(expected, reply.Records, cancellationToken);
                window.Release();
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            // A failed request cancels the reads: report its failure, not the read it cut short.
            await failed.CancelAsync();
            await asking.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (asking.Exception?.InnerException is { } requestFailure)
                ExceptionDispatchInfo.Throw(requestFailure);
            throw;
        }
        finally
        {
            await failed.CancelAsync();
            await asking.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    /// <summary>Sends each batch's request once the window has room: at most MaxInFlight unanswered. A failure stops the reads too.</summary>
    private static async Task AskAsync(ClientSession session, Stream stream, SemaphoreSlim window, CancellationTokenSource failed)
    {
        try
        {
            foreach (var batch in session.Batches)
            {
                await window.WaitAsync(failed.Token);
                session.Sent(batch);
                await RecordFrames.WriteRequestAsync(stream, batch, failed.Token);
            }
        }
        catch (IOException e)
        {
            await failed.CancelAsync();
            throw new TransportException(TransportError.ConnectionLost, $"A request could not be sent: {e.Message}", e);
        }
        catch (Exception) when (!failed.IsCancellationRequested)
        {
            await failed.CancelAsync();
            throw;
        }
    }

    private static async Task<RecordFrames.RecordsReply> ReadReplyAsync(Stream stream, int maxFrameBytes, TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var stalled = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        stalled.CancelAfter(timeout);
        try
        {
            return await RecordFrames.ReadRecordsAsync(stream, maxFrameBytes, stalled.Token)
                ?? throw new TransportException(TransportError.ConnectionLost, "The server closed the connection.");
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new TransportException(TransportError.ConnectionLost, $"No reply for {timeout.TotalSeconds:0} s (ReplyTimeoutSeconds).");
        }
        catch (IOException e)
        {
            throw new TransportException(TransportError.ConnectionLost, $"The connection broke: {e.Message}", e);
        }
    }

}

public sealed class MyServer : TransportServer
{
    public override async Task<TransportListener> BindAsync(ServerSession session, CancellationToken cancellationToken)
    {
        var address = IPAddress.TryParse(session.BindAddress, out var parsed)
            ? parsed
            : (await Dns.GetHostAddressesAsync(session.BindAddress, cancellationToken))[0];
        var listener = new TcpListener(address, session.Port);
        try
        {
            listener.Start();
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            throw new TransportException(TransportError.PortInUse, $"Port {session.Port} on {session.BindAddress} is taken.", e);
        }
        return new MyListener(listener, session);
    }
}

/// <summary>The bound port: serves until the suite stops it, then frees the port.</summary>
public sealed class MyListener(TcpListener listener, ServerSession session) : TransportListener
{
    public override async Task RunAsync(CancellationToken stop)
    {
        var connections = new List<Task>();
        try
        {
            while (true)
            {
                var connection = await listener.AcceptTcpClientAsync(stop);
                connections.RemoveAll(c => c.IsCompleted);
                connections.Add(AnswerAsync(connection, session, stop));
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
        finally
        {
            await Task.WhenAll(connections);
        }
    }

    public override ValueTask DisposeAsync()
    {
        listener.Dispose();
        return base.DisposeAsync();
    }

    /// <summary>One client's connection: its requests answered in order, from a ServiceTable reader of its own.</summary>
    private static async Task AnswerAsync(TcpClient connection, ServerSession session, CancellationToken stop)
    {
        using (connection)
        {
            try
            {
                await using var reader = await session.OpenReaderAsync(stop);
                var stream = connection.GetStream();
                while (await RecordFrames.ReadRequestAsync(stream, stop) is { } batch)
                {
                    if (batch.Count > session.MaxBatchRecords)
                        throw new TransportException(TransportError.BatchTooLarge, $"A request for {batch.Count} records is more than {session.MaxBatchRecords} (MaxBatchRecords).");
                    var records = new List<ServiceRecord>(batch.Count);
                    await foreach (var record in reader.ReadAsync(batch, stop))
                        records.Add(record);
                    await RecordFrames.WriteRecordsAsync(stream, batch, records, stop);
                }
            }
            catch (TransportException e)
            {
                session.Log.Warning(e.Error, $"A client's connection was closed: {e.Message}");
            }
            catch (Exception e) when (e is IOException or SocketException or OperationCanceledException)
            {
                // The client went away, or the server is stopping: this connection ends, the others go on.
            }
            catch (Exception e)
            {
                // The database's failure (its code in the message): this client's connection ends, it resumes; the others go on.
                session.Log.Warning(TransportError.RequestRefused, $"A request failed and its connection was closed: {e.Message}");
            }
        }
    }
}
