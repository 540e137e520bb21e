using System.ServiceModel;
using System.ServiceModel.Channels;
using System.Xml;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Wcf;

public enum WcfBinding { Soap, NetTcp }

/// <summary>The series' six ways a client calls the service.</summary>
public enum WcfVariant
{
    /// <summary>One synchronous call per record.</summary>
    SmallRequests,

    /// <summary>One synchronous call per batch, then its import; next.</summary>
    SmallBatches,

    /// <summary>Batch calls issued without waiting for each other (bounded) against the concurrent operation; asynchronous imports.</summary>
    SmallBatchesAsync,

    /// <summary>The same client against the sequential operation.</summary>
    SmallBatchesAsyncSyncServer,

    /// <summary>Threads taking batches (bounded): a synchronous call and import each.</summary>
    SmallBatchesMultiThread,

    /// <summary>A task per batch (bounded): a synchronous call and import each.</summary>
    SmallBatchesTask,
}

/// <summary>
/// The WCF client (System.ServiceModel) of both bindings in every variant: one channel per transfer,
/// opened before the clock's setup mark, closed on success and aborted on failure; at most
/// <see cref="MaxInFlight"/> batches requested and not yet imported; a fault is a coded error.
/// </summary>
public sealed class WcfClient(WcfBinding binding, WcfVariant variant, Uri address, string serverTarget)
{
    public int MaxInFlight { get; init; } = SettingDefaults.MaxInFlight;
    public long MaxMessageBytes { get; init; } = 64L * 1024 * 1024;
    public TimeSpan CallTimeout { get; init; } = TimeSpan.FromMinutes(30);

    /// <summary>Over https:// (SOAP only): the server's certificate must chain to this authority and name the address's host.</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? Authority { get; init; }

    /// <summary>Mutual TLS: the certificate (with its key) the client presents; null: none.</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? ClientCertificate { get; init; }

    /// <summary>SOAP only: the service's bearer token, sent with every call; null: none.</summary>
    public Hosting.ServiceToken? Token { get; init; }

    /// <summary>The net.tcp client's connection buffer (and so its socket receive buffer).</summary>
    public const int ConnectionBufferBytes = 64 * 1024;

    /// <param name="tlsHost">net.tcp over TLS: the host the certificate must name (checked by <see cref="HostNameVerifier"/>).</param>
    /// <param name="clientCertificate">net.tcp over TLS: the client presents a certificate (the factory's ClientCertificate).</param>
    public static Binding CreateBinding(WcfBinding binding, long maxMessageBytes, TimeSpan timeout, bool tls = false, string? tlsHost = null, bool clientCertificate = false)
    {
        var size = (int)Math.Min(maxMessageBytes, int.MaxValue);
        var quotas = new XmlDictionaryReaderQuotas { MaxArrayLength = size, MaxStringContentLength = size, MaxDepth = 32, MaxBytesPerRead = 64 * 1024, MaxNameTableCharCount = 16 * 1024 };
        Binding result = binding switch
        {
            WcfBinding.Soap => new BasicHttpBinding(tls ? BasicHttpSecurityMode.Transport : BasicHttpSecurityMode.None) { MaxReceivedMessageSize = maxMessageBytes, MaxBufferSize = size, ReaderQuotas = quotas },
            _ => new NetTcpBinding(tls ? SecurityMode.Transport : SecurityMode.None)
            {
                MaxReceivedMessageSize = maxMessageBytes, MaxBufferSize = size, ReaderQuotas = quotas,
                Security = { Transport = { ClientCredentialType = clientCertificate ? TcpClientCredentialType.Certificate : TcpClientCredentialType.None, SslProtocols = Hosting.TlsCertificates.Protocols } },
            },
        };
        result.OpenTimeout = result.CloseTimeout = TimeSpan.FromSeconds(Math.Min(60, timeout.TotalSeconds));
        result.SendTimeout = result.ReceiveTimeout = timeout;
        if (binding == WcfBinding.Soap)
            return result;
        // NetTcpBinding's default ConnectionBufferSize (8 KB) also sizes the socket's receive buffer: on Linux the window
        // then reopens only slowly, and a large reply crawled even on loopback; 64 KB lets it flow.
        var elements = result.CreateBindingElements();
        elements.Find<TcpTransportBindingElement>()!.ConnectionBufferSize = ConnectionBufferBytes;
        if (elements.Find<SslStreamSecurityBindingElement>() is { } ssl && tlsHost is not null)
            ssl.IdentityVerifier = new HostNameVerifier(tlsHost);
        return new CustomBinding(elements)
        {
            OpenTimeout = result.OpenTimeout, CloseTimeout = result.CloseTimeout, SendTimeout = result.SendTimeout, ReceiveTimeout = result.ReceiveTimeout,
        };
    }

    /// <summary>
    /// Moves the plan's batches; a channel that fails mid-transfer is resumed through <paramref name="resumption"/> with a new channel
    /// calling only for the batches not committed (a batch is imported whole once its call returned, so none is ever half in).
    /// </summary>
    public async Task<TransferResult> RunAsync(BatchPlan plan, BatchImporter importer, ResumingTransfer resumption, CancellationToken cancellationToken)
    {
        var imports = new SerialImporter(importer);
        await resumption.RunAsync((missing, token) => RunChannelAsync(plan, missing, imports, importer, resumption, token), cancellationToken)
            .ConfigureAwait(false);
        // The WCF client does not expose what it sent and received: the report shows "–" for bytes on the wire.
        return TransferResult.BytesNotMeasured;
    }

    /// <summary>One channel: opened, the batches called for, closed on success and aborted on failure.</summary>
    private async Task RunChannelAsync(BatchPlan plan, IReadOnlyList<int> batches, SerialImporter imports, BatchImporter importer,
        ResumingTransfer resumption, CancellationToken cancellationToken)
    {
        var factory = CreateFactory();
        IIntegrationTestsClient? service = null;
        try
        {
            service = factory.CreateChannel();
            var channel = (IClientChannel)service;
            using (cancellationToken.Register(channel.Abort)) // a cancelled run ends its calls at once
            {
                await Task.Factory.FromAsync(channel.BeginOpen, channel.EndOpen, null).ConfigureAwait(false);
                importer.MarkSetupDone();
                // A reply received means the server was there: a failure after it is a break, not "no server".
                var calls = new BatchCalls(service, channel.Abort, plan, imports, resumption);
                await calls.RunAsync(variant, batches, MaxInFlight, cancellationToken).ConfigureAwait(false);
                await Task.Factory.FromAsync(channel.BeginClose, channel.EndClose, null).ConfigureAwait(false);
            }
            factory.Close();
        }
        catch (Exception e)
        {
            (service as IClientChannel)?.Abort();
            factory.Abort();
            cancellationToken.ThrowIfCancellationRequested();
            throw Translate(e);
        }
    }

    /// <summary>The channel factory of one channel run: the binding, and over TLS who the server's certificate must come from and name.</summary>
    internal ChannelFactory<IIntegrationTestsClient> CreateFactory()
    {
        var factory = new ChannelFactory<IIntegrationTestsClient>(
            CreateBinding(binding, MaxMessageBytes, CallTimeout, Authority is not null, address.Host, ClientCertificate is not null), new EndpointAddress(address));
        if (binding == WcfBinding.Soap)
        {
            if (Authority is not null || Token is not null)
                factory.Endpoint.EndpointBehaviors.Add(new SoapHandler(Authority, ClientCertificate, Token));
            return factory;
        }
        if (Authority is { } netTcpAuthority)
            factory.Credentials.ServiceCertificate.SslCertificateAuthentication = new System.ServiceModel.Security.X509ServiceCertificateAuthentication
            {
                CertificateValidationMode = System.ServiceModel.Security.X509CertificateValidationMode.Custom,
                CustomCertificateValidator = new AuthorityValidator(netTcpAuthority), RevocationMode = System.Security.Cryptography.X509Certificates.X509RevocationMode.NoCheck,
            };
        if (ClientCertificate is not null)
            factory.Credentials.ClientCertificate.Certificate = ClientCertificate;
        return factory;
    }

    private Exception Translate(Exception e)
    {
        if (e is AggregateException { InnerExceptions.Count: 1 } aggregate)
            e = aggregate.InnerException!;
        return e switch
        {
            IntegrationException => e,
            _ when Streams.TlsConnector.HandshakeRefusal(e) is { } refused =>
                new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {address.Authority} failed: {refused.Message}", e),
            // net.tcp's upgrade: the certificate refused by the validator, or a name WCF's identity check does not find in it.
            System.ServiceModel.Security.SecurityNegotiationException or System.ServiceModel.Security.MessageSecurityException =>
                new IntegrationException(ErrorCodes.TlsRefused, $"TLS with {address.Authority} failed: {e.Message}", e),
            FaultException fault => CodedError.TryParse(fault.Message, out var code, out var message)
                ? new IntegrationException(code, $"The service answered with a fault: {message}", e)
                : new IntegrationException(ErrorCodes.RequestRefused, $"The service answered with a fault: {fault.Message}", e),
            _ when e is EndpointNotFoundException || Refused(e) => new IntegrationException(ErrorCodes.ConnectionFailed,
                $"Cannot reach {address}: {e.Message} Is the server running? Start it with: dotnet msbuild build.proj -t:{serverTarget}", e),
            TimeoutException => new IntegrationException(ErrorCodes.Timeout, $"A call to {address} timed out: {e.Message}", e),
            // BasicHttpBinding lets a connection reset mid-reply through as the socket's own IOException.
            CommunicationException or IOException or System.Net.Sockets.SocketException =>
                new IntegrationException(ErrorCodes.ConnectionLost, $"The channel to {address} failed: {e.Message}", e),
            _ => e,
        };
    }

    /// <summary>
    /// WCF's HTTP handler, given to this before use (its Func binding parameter), so every other setting of the binding stays: over
    /// TLS judged by the suite's authority alone (<see cref="Hosting.TlsCertificates.IsFromAuthority"/>) and presenting the client
    /// certificate if there is one; with a token, wrapped to send it with every call.
    /// </summary>
    private sealed class SoapHandler(System.Security.Cryptography.X509Certificates.X509Certificate2? authority,
        System.Security.Cryptography.X509Certificates.X509Certificate2? clientCertificate, Hosting.ServiceToken? token) : System.ServiceModel.Description.IEndpointBehavior
    {
        public void AddBindingParameters(System.ServiceModel.Description.ServiceEndpoint endpoint, BindingParameterCollection bindingParameters) =>
            bindingParameters.Add(new Func<System.Net.Http.HttpClientHandler, System.Net.Http.HttpMessageHandler>(handler =>
            {
                if (authority is not null)
                    handler.ServerCertificateCustomValidationCallback = (_, certificate, chain, errors) =>
                        certificate is not null && Hosting.TlsCertificates.IsFromAuthority(certificate, chain, errors, authority);
                if (clientCertificate is not null)
                {
                    handler.ClientCertificateOptions = System.Net.Http.ClientCertificateOption.Manual;
                    handler.ClientCertificates.Add(clientCertificate);
                }
                return Transfer.BearerTokenHandler.Around(handler, token);
            }));

        public void ApplyClientBehavior(System.ServiceModel.Description.ServiceEndpoint endpoint, System.ServiceModel.Dispatcher.ClientRuntime clientRuntime) { }
        public void ApplyDispatchBehavior(System.ServiceModel.Description.ServiceEndpoint endpoint, System.ServiceModel.Dispatcher.EndpointDispatcher endpointDispatcher) { }
        public void Validate(System.ServiceModel.Description.ServiceEndpoint endpoint) { }
    }

    /// <summary>
    /// net.tcp's TLS: WCF hands the validator the server's certificate alone; its chain must build to the authority. The name is
    /// WCF's own check (the endpoint's DNS identity against the certificate).
    /// </summary>
    private sealed class AuthorityValidator(System.Security.Cryptography.X509Certificates.X509Certificate2 authority) : System.IdentityModel.Selectors.X509CertificateValidator
    {
        public override void Validate(System.Security.Cryptography.X509Certificates.X509Certificate2 certificate)
        {
            if (!Hosting.TlsCertificates.IsFromAuthority(certificate, null, System.Net.Security.SslPolicyErrors.RemoteCertificateChainErrors, authority))
                throw new System.IdentityModel.Tokens.SecurityTokenValidationException("The server's certificate does not chain to the suite's authority.");
        }
    }

    /// <summary>
    /// net.tcp's name check: the certificate must name the host connected to, by DNS name or IP address (WCF's own check compares a
    /// DNS identity with DNS names alone, so an address such as 127.0.0.1 could never match its IP entry).
    /// </summary>
    private sealed class HostNameVerifier(string host) : System.ServiceModel.Security.IdentityVerifier
    {
        public override bool CheckAccess(EndpointIdentity identity, System.IdentityModel.Policy.AuthorizationContext authContext) =>
            authContext.ClaimSets.OfType<System.IdentityModel.Claims.X509CertificateClaimSet>()
                .Any(claims => claims.X509Certificate.MatchesHostname(host, allowWildcards: false, allowCommonName: false));

        public override bool TryGetIdentity(EndpointAddress reference, out EndpointIdentity identity)
        {
            identity = new DnsEndpointIdentity(host);
            return true;
        }
    }

    /// <summary>Nothing listens there (HTTP reports it as a plain CommunicationException).</summary>
    private static bool Refused(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is System.Net.Sockets.SocketException { SocketErrorCode: System.Net.Sockets.SocketError.ConnectionRefused })
                return true;
        }
        return false;
    }
}

/// <summary>
/// The series' six ways of calling for a list of batches, each batch imported whole and marked committed. When the concurrent
/// variants stop at their first failure, the channel is aborted: WCF's calls take no token, and one sent as the session ended
/// could otherwise wait for its reply until the call timeout (30 min), and the attempt, which ends only when every call has, with it.
/// </summary>
internal sealed class BatchCalls(IIntegrationTestsClient service, Action abortChannel, BatchPlan plan, SerialImporter imports, ResumingTransfer resumption)
{
    public Task RunAsync(WcfVariant variant, IReadOnlyList<int> batches, int maxInFlight, CancellationToken cancellationToken) => variant switch
    {
        WcfVariant.SmallRequests => EachInTurnAsync(batches, RecordByRecord, cancellationToken),
        WcfVariant.SmallBatches => EachInTurnAsync(batches, b => service.GetRecords(plan.FirstId(b), plan.BatchSize), cancellationToken),
        WcfVariant.SmallBatchesAsync => BoundedBatches.RunAsync(batches.Count, maxInFlight, async (i, token) =>
            await ImportAsync(batches[i], await CallAsync(batches[i], () => service.GetRecordsConcurrentlyAsync(plan.FirstId(batches[i]), plan.BatchSize), token).ConfigureAwait(false), token)
                .ConfigureAwait(false), cancellationToken),
        WcfVariant.SmallBatchesAsyncSyncServer => BoundedBatches.RunAsync(batches.Count, maxInFlight, async (i, token) =>
            await ImportAsync(batches[i], await CallAsync(batches[i], () => service.GetRecordsAsync(plan.FirstId(batches[i]), plan.BatchSize), token).ConfigureAwait(false), token)
                .ConfigureAwait(false), cancellationToken),
        WcfVariant.SmallBatchesTask => OnReservedPoolThreadsAsync(maxInFlight, () => BoundedBatches.RunAsync(batches.Count, maxInFlight, (i, token) => Task.Run(() =>
            ImportAsync(batches[i], Call(batches[i], () => service.GetRecords(plan.FirstId(batches[i]), plan.BatchSize), token), token), token), cancellationToken)),
        WcfVariant.SmallBatchesMultiThread => BoundedBatches.RunOnThreadsAsync(batches.Count, maxInFlight, (i, token) =>
            ImportAsync(batches[i], Call(batches[i], () => service.GetRecords(plan.FirstId(batches[i]), plan.BatchSize), token), token).GetAwaiter().GetResult(), cancellationToken),
        _ => throw new ArgumentOutOfRangeException(nameof(variant)),
    };

    /// <summary>Each task blocks a pool thread in its synchronous call: the pool keeps that many more threads ready meanwhile.</summary>
    private static async Task OnReservedPoolThreadsAsync(int threads, Func<Task> run)
    {
        using (ThreadPoolReservation.Reserve(threads))
            await run().ConfigureAwait(false);
    }

    // The batch runners cancel `stop` after recording their first failure, so the calls the abort ends are never reported instead of it.
    private RecordData[] Call(int batch, Func<RecordData[]> call, CancellationToken stop)
    {
        resumption.Committed.Latency.Sent(batch);
        using (stop.Register(abortChannel))
            return call();
    }

    private async Task<RecordData[]> CallAsync(int batch, Func<Task<RecordData[]>> call, CancellationToken stop)
    {
        await resumption.Committed.Latency.SendTurnAsync(batch, stop).ConfigureAwait(false);
        using (stop.Register(abortChannel))
            return await call().ConfigureAwait(false);
    }

    /// <summary>One call per record, collected into the batch it belongs to.</summary>
    private RecordData[] RecordByRecord(int batch) => plan.Ids(batch).Select(service.GetRecord).OfType<RecordData>().ToArray();

    /// <summary>Lock-step: the calls are synchronous, as in the series; the import of a batch completes before the next call.</summary>
    private async Task EachInTurnAsync(IReadOnlyList<int> batches, Func<int, RecordData[]> call, CancellationToken cancellationToken)
    {
        foreach (var batch in batches)
        {
            cancellationToken.ThrowIfCancellationRequested();
            resumption.Committed.Latency.Sent(batch);
            await ImportAsync(batch, call(batch), cancellationToken).ConfigureAwait(false);
        }
    }

    private async Task ImportAsync(int batch, RecordData[] records, CancellationToken cancellationToken)
    {
        resumption.Committed.Latency.Received(batch);
        resumption.MarkConnected();
        await imports.ImportAsync(records.Select(r => r.ToRecord()).ToList(), cancellationToken).ConfigureAwait(false);
        resumption.Committed.Add(batch);
    }
}
