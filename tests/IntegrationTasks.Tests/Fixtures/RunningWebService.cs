namespace IntegrationTasks.Tests;

/// <summary>The server a web-service or Kestrel transport calls (net.tcp in the test process, the others as host modules), and its clients.</summary>
internal sealed class RunningWebService : IAsyncDisposable
{
    private readonly string _transport;
    private readonly RunningNetTcpServer? _netTcp;
    private readonly RunningHostModule? _host;

    private RunningWebService(string transport, RunningNetTcpServer? netTcp, RunningHostModule? host) =>
        (_transport, _netTcp, _host) = (transport, netTcp, host);

    public int Port => _netTcp?.Port ?? _host!.Port;

    /// <summary>A host module's endpoint URL (its path included).</summary>
    public string Url => _host?.Url ?? throw new InvalidOperationException("The net.tcp server has an address, not a URL.");

    /// <summary>What the server logged so far.</summary>
    public string Log => _netTcp is not null ? string.Join("\n", _netTcp.Log.Lines) : _host!.Log;

    /// <param name="transport">NetTcp…, Soap…, Grpc…, HttpRequest or RestJson.</param>
    public static async Task<RunningWebService> StartAsync(string transport, TestDatabases databases, int maxConnections)
    {
        if (transport.StartsWith("NetTcp", StringComparison.Ordinal))
            return new(transport, await RunningNetTcpServer.StartAsync(databases.Server, maxConnections: maxConnections), null);
        var (task, path) = transport switch
        {
            _ when transport.StartsWith("Soap", StringComparison.Ordinal) =>
                ((HostModuleServerTask)new IntegrationTasks.Wcf.SoapServer { Connections = 2, Answerers = 1 }, IntegrationTasks.Wcf.ServiceNames.SoapPath),
            "HttpRequest" => (new IntegrationTasks.Http.HttpServer(), IntegrationTasks.Http.HttpRecordsProtocol.Path),
            "RestJson" => (new IntegrationTasks.Rest.RestServer(), IntegrationTasks.Rest.RestProtocol.Path),
            _ => (new IntegrationTasks.Grpc.GrpcServer { Connections = 2, Answerers = 1 }, ""),
        };
        task.MaxConnections = maxConnections;
        return new(transport, null, await RunningHostModule.StartAsync(task, databases, path));
    }

    /// <summary>A new client task of the transport, pointed at this server.</summary>
    public TransferClientTask NewClient()
    {
        if (_transport == "HttpRequest")
            return new IntegrationTasks.Http.HttpRequest { Uri = _host!.Url };
        if (_transport == "RestJson")
            return new IntegrationTasks.Rest.RestJson { Uri = _host!.Url, MaxInFlight = 1 }; // HTTP/1.1: a connection per request in flight
        var type = typeof(TransferClientTask).Assembly.GetTypes().Single(t => t.Name == _transport && t.IsSubclassOf(typeof(TransferClientTask)));
        var client = (TransferClientTask)Activator.CreateInstance(type)!;
        var address = _netTcp?.Address ?? _host!.Url;
        switch (client)
        {
            case IntegrationTasks.Wcf.WcfClientTask wcf:
                wcf.Address = address;
                break;
            case IntegrationTasks.Grpc.GrpcClientTask grpc:
                grpc.Address = address;
                break;
        }
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        if (_netTcp is not null)
            await _netTcp.DisposeAsync();
        if (_host is not null)
            await _host.DisposeAsync();
    }
}
