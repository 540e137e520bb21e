using Grpc.Core;
using Grpc.Net.Client;
using IntegrationTasks.Grpc.Contract;
using IntegrationTasks.Transfer;
using RecordService = IntegrationTasks.Grpc.Contract.RecordService;

namespace IntegrationTasks.Grpc;

/// <summary>
/// The gRPC clients: unary (one call per batch, at most <see cref="MaxInFlight"/> at once, imported as they arrive) and
/// bidirectional streaming (one call per transfer: batch requests flow up, at most <see cref="MaxInFlight"/> ahead of
/// the replies, which are imported in order). Every call has a deadline; the channel is disposed on success and failure;
/// a status other than OK is a coded error naming it.
/// </summary>
public sealed class GrpcRecordsClient(Uri address, string serverTarget)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public int MaxMessageBytes { get; init; } = 64 * 1024 * 1024;
    public TimeSpan Deadline { get; init; } = TimeSpan.FromMinutes(30);

    /// <summary>For an https:// address: the server's certificate checked against these (the suite's authority alone); null for h2c.</summary>
    public System.Net.Security.SslClientAuthenticationOptions? Tls { get; init; }

    /// <summary>The service's bearer token, sent with every call; null: none.</summary>
    public Hosting.ServiceToken? Token { get; init; }

    /// <summary>Moves the plan's batches; a broken call or connection is resumed through <paramref name="resumption"/> with calls for the batches not committed.</summary>
    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, bool streaming, ResumingTransfer resumption,
        CancellationToken cancellationToken)
    {
        // Every connection the channel opens is counted: the bytes on the wire, HTTP/2 framing included.
        var connections = new CountedHttpConnections(resumption);
        var handler = connections.CreateHandler(); // the channel's HttpClient disposes it
        if (Tls is { } tls)
        {
            handler.SslOptions = tls;
            handler.ConnectTimeout = TimeSpan.FromSeconds(30); // the handshake's bound (it is part of the connect)
        }
        using var channel = GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            MaxReceiveMessageSize = MaxMessageBytes, MaxSendMessageSize = MaxMessageBytes, HttpHandler = BearerTokenHandler.Around(handler, Token), DisposeHttpClient = true,
        });
        var client = new RecordService.RecordServiceClient(channel);
        var deadline = DateTime.UtcNow + Deadline;
        var imports = new SerialImporter(importer);
        importer.MarkSetupDone(); // the connection is made by the first call (as HttpClient does for HttpRequest)
        await resumption.RunAsync(async (missing, token) =>
        {
            var answered = plan.TotalBatches - missing.Count; // replies of earlier attempts count: a failure after them is a break
            try
            {
                if (streaming)
                    await StreamAsync(client, plan, missing, imports, resumption.Committed, deadline, () => Interlocked.Increment(ref answered), token)
                        .ConfigureAwait(false);
                else
                    await BoundedBatches.RunAsync(missing.Count, MaxInFlight, async (index, batchToken) =>
                    {
                        var batch = missing[index];
                        await resumption.Committed.Latency.SendTurnAsync(batch, batchToken).ConfigureAwait(false);
                        var reply = await client.GetBatchAsync(new BatchRequest { FirstId = plan.FirstId(batch), Count = plan.BatchSize },
                            deadline: deadline, cancellationToken: batchToken).ConfigureAwait(false);
                        Interlocked.Increment(ref answered);
                        resumption.Committed.Latency.Received(batch);
                        await imports.ImportAsync(reply.Records.Select(r => r.ToRecord()).ToList(), batchToken).ConfigureAwait(false);
                        resumption.Committed.Add(batch);
                    }, token).ConfigureAwait(false);
            }
            catch (RpcException e) when (!token.IsCancellationRequested)
            {
                throw Translate(e, Volatile.Read(ref answered));
            }
            catch (IOException e) when (!token.IsCancellationRequested)
            {
                // A reset can reach the streaming call's request or response stream unwrapped (not as an RpcException): still a break to resume.
                throw new IntegrationException(ErrorCodes.ConnectionLost, $"The call to {address} broke off: {e.Message}", e);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                throw new IntegrationException(ErrorCodes.ConnectionFailed,
                    $"Cannot connect to {address}. Is the server running? Start it with: dotnet msbuild build.proj -t:{serverTarget}");
            }
        }, cancellationToken).ConfigureAwait(false);
        return new TransferResult(connections.BytesWritten, connections.BytesRead);
    }

    private async Task StreamAsync(RecordService.RecordServiceClient client, BatchPlan plan, IReadOnlyList<int> batches, SerialImporter imports,
        CommittedBatches committed, DateTime deadline, Action answered, CancellationToken cancellationToken)
    {
        using var call = client.StreamBatches(deadline: deadline, cancellationToken: cancellationToken);
        using var ahead = new SemaphoreSlim(MaxInFlight, MaxInFlight);
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var send = Task.Run(async () =>
        {
            foreach (var batch in batches)
            {
                await ahead.WaitAsync(stop.Token).ConfigureAwait(false);
                await committed.Latency.SendTurnAsync(batch, stop.Token).ConfigureAwait(false);
                await call.RequestStream.WriteAsync(new BatchRequest { FirstId = plan.FirstId(batch), Count = plan.BatchSize }, stop.Token).ConfigureAwait(false);
            }
            await call.RequestStream.CompleteAsync().ConfigureAwait(false);
        }, stop.Token);
        var receive = Task.Run(async () =>
        {
            var expected = 0;
            await foreach (var reply in call.ResponseStream.ReadAllAsync(stop.Token).ConfigureAwait(false))
            {
                if (expected >= batches.Count || reply.FirstId != plan.FirstId(batches[expected]))
                    throw new IntegrationException(ErrorCodes.TransferFailed,
                        $"The stream answered batch {reply.FirstId} where {(expected < batches.Count ? plan.FirstId(batches[expected]) : "none")} was next.");
                answered();
                committed.Latency.Received(batches[expected]);
                await imports.ImportAsync(reply.Records.Select(r => r.ToRecord()).ToList(), stop.Token).ConfigureAwait(false);
                committed.Add(batches[expected]);
                ahead.Release();
                expected++;
            }
            if (expected != batches.Count)
                throw new IntegrationException(ErrorCodes.TransferFailed, $"The stream ended after {expected} of {batches.Count} batches.");
        }, stop.Token);
        await TaskGroup.WhenAllOrFirstFailure(stop, send, receive).ConfigureAwait(false);
    }

    private IntegrationException Translate(RpcException e, int answered) => e.StatusCode switch
    {
        _ when e.Status.DebugException is System.Net.Http.HttpRequestException
        {
            HttpRequestError: System.Net.Http.HttpRequestError.SecureConnectionError, InnerException: System.Security.Authentication.AuthenticationException,
        } tls =>
            new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {address.Authority} failed: {tls.Message}{(tls.InnerException is { } inner ? $" ({inner.Message})" : "")}", e),
        StatusCode.Unavailable when answered == 0 => new IntegrationException(ErrorCodes.ConnectionFailed,
            $"Cannot reach {address} ({e.Status.Detail}). Is the server running? Start it with: dotnet msbuild build.proj -t:{serverTarget}", e),
        StatusCode.DeadlineExceeded => new IntegrationException(ErrorCodes.Timeout, $"A call to {address} passed its deadline ({e.Status.Detail}).", e),
        StatusCode.Unavailable or StatusCode.Cancelled or StatusCode.Internal when answered > 0 => new IntegrationException(ErrorCodes.ConnectionLost,
            $"The call to {address} broke off with status {e.StatusCode}: {e.Status.Detail}", e),
        _ => CodedError.TryParse(e.Status.Detail, out var code, out var message)
            ? new IntegrationException(code, $"The server answered {e.StatusCode}: {message}", e)
            : new IntegrationException(ErrorCodes.RequestRefused, $"The server answered {e.StatusCode}: {e.Status.Detail}", e),
    };
}
