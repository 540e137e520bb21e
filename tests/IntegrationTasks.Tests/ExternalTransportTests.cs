namespace IntegrationTasks.Tests;

/// <summary>A transport this assembly declares, found by the loader as one of another repository would be.</summary>
public sealed class LoadingProbeTransport : Transport
{
    public override string Name => "LoadingProbe";
    public override TransportCapabilities Capabilities => TransportCapabilities.ManyClients;
    public static readonly TransportSetting<int> Lines = new("Lines", 1, "a whole number above 0", lines => lines > 0);
    public override IReadOnlyCollection<TransportSetting> Settings => [Lines];
    public override TransportClient CreateClient() => throw new NotSupportedException();
    public override TransportServer CreateServer() => throw new NotSupportedException();
}

/// <summary>
/// A transport whose client makes its records up (no server, no network): what the suite checks of an external client, driven
/// through <see cref="ExternalClient"/> as a run would. Mode says how it misbehaves.
/// </summary>
public sealed class FabricatingTransport : Transport
{
    public override string Name => "Fabricating";
    public override TransportServerKind ServerKind => TransportServerKind.NoPort;
    public override TransportCapabilities Capabilities => TransportCapabilities.Resumes | TransportCapabilities.Pipelines;
    private static readonly TransportSetting<string> Mode = new("Mode", "AllAtOnce", "one of the modes the test names");
    public override IReadOnlyCollection<TransportSetting> Settings => [Mode];
    public override TransportClient CreateClient() => new FabricatingClient();
    public override TransportServer CreateServer() => throw new NotSupportedException();

    private sealed class FabricatingClient : TransportClient
    {
        public override async Task TransferAsync(ClientSession session, CancellationToken cancellationToken)
        {
            session.Connected();
            var batches = session.Batches;
            switch (session.ValueOf(Mode))
            {
                case "AllAtOnce":
                    // Each write on a thread of its own, at once: SQLite's calls are synchronous, so awaited in turn they would never meet.
                    using (var start = new ManualResetEventSlim())
                    {
                        var writes = batches.Select(b => Task.Run(async () =>
                        {
                            start.Wait(cancellationToken);
                            await session.WriteAsync(b, Records(b), cancellationToken);
                        }, cancellationToken)).ToList();
                        start.Set();
                        await Task.WhenAll(writes);
                    }
                    break;
                case "Stray":
                    await session.WriteAsync(batches[0], Records(batches[1]), cancellationToken);
                    break;
                case "Twice":
                    await session.WriteAsync(batches[0], Records(batches[0]), cancellationToken);
                    await session.WriteAsync(batches[0], Records(batches[0]), cancellationToken);
                    break;
                case "LeavesOne":
                    foreach (var batch in batches.SkipLast(1))
                        await session.WriteAsync(batch, Records(batch), cancellationToken);
                    break;
                case "BreaksOnce":
                    // The first attempt (it has batch 0) writes half, then loses its connection; the next has the rest.
                    foreach (var batch in batches[0].Index == 0 ? batches.Take(batches.Count / 2) : batches)
                        await session.WriteAsync(batch, Records(batch), cancellationToken);
                    if (batches[0].Index == 0)
                        throw new TransportException(TransportError.ConnectionLost, "cut");
                    break;
            }
        }

        private static ServiceRecord[] Records(RequestedBatch batch) =>
            [.. Enumerable.Range(batch.FirstId, batch.Count).Select(id => new ServiceRecord(id, $"record {id}", id / 7.0, new DateTime(2014, 3, 9), null, ""))];
    }
}

/// <summary>
/// A transport whose client asks over a connection the suite opens (<see cref="ClientSession.ConnectAsync"/>) and counts no bytes
/// itself: it sends one byte a batch, reads four back, and makes the batch's records up.
/// </summary>
public sealed class ConnectingTransport : Transport
{
    public override string Name => "Connecting";
    public override TransportCapabilities Capabilities => TransportCapabilities.None;
    public override TransportClient CreateClient() => new ConnectingClient();
    public override TransportServer CreateServer() => throw new NotSupportedException();

    private sealed class ConnectingClient : TransportClient
    {
        public override async Task TransferAsync(ClientSession session, CancellationToken cancellationToken)
        {
            await using var connection = await session.ConnectAsync(cancellationToken);
            var reply = new byte[4];
            foreach (var batch in session.Batches)
            {
                session.Sent(batch);
                await connection.WriteAsync(new byte[] { 1 }, cancellationToken);
                await connection.ReadExactlyAsync(reply, cancellationToken);
                await session.WriteAsync(batch, [.. Enumerable.Range(batch.FirstId, batch.Count).Select(id => new ServiceRecord(id, "", 0, default, null, ""))], cancellationToken);
            }
        }
    }
}

/// <summary>How an external transport's assembly is loaded and checked, and what the seam's assembly makes public.</summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ExternalTransportTests
{
    private static string ThisAssembly => typeof(LoadingProbeTransport).Assembly.Location;

    [TestMethod]
    public void A_transport_is_found_by_name_in_a_context_of_its_own_that_shares_the_seam()
    {
        var transport = ExternalTransports.Find(ThisAssembly, "LoadingProbe");

        Assert.AreEqual(("LoadingProbe", TransportCapabilities.ManyClients), (transport.Name, transport.Capabilities));
        Assert.AreNotSame(typeof(LoadingProbeTransport).Assembly, transport.GetType().Assembly, "loaded from its bytes, not the running copy");
        Assert.AreSame(typeof(Transport).Assembly, transport.GetType().BaseType!.Assembly, "one seam for the suite and the transport");
        Assert.AreSame(transport, ExternalTransports.Find(ThisAssembly, "LoadingProbe"), "loaded once while the file is unchanged");
    }

    [TestMethod]
    public void A_name_the_assembly_does_not_declare_is_IT1001_naming_what_it_does()
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => ExternalTransports.Find(ThisAssembly, "Nope"));

        Assert.AreEqual(ErrorCodes.InvalidParameter, e.Code);
        StringAssert.Contains(e.Message, "LoadingProbe");
    }

    [TestMethod]
    public void A_missing_assembly_is_IT1001()
    {
        var e = Assert.ThrowsExactly<IntegrationException>(() => ExternalTransports.Find("/nonexistent/MyTransport.dll", "MyTransport"));

        Assert.AreEqual(ErrorCodes.InvalidParameter, e.Code);
    }

    [TestMethod]
    [DataRow("Lines=3", 9300, null, 3)]
    [DataRow("", 9300, null, 1)]
    [DataRow("Lines=3,Colour=red", 9300, "IT1001", 0)]
    [DataRow("Lines", 9300, "IT1001", 0)]
    [DataRow("Lines=three", 9300, "IT1001", 0)]
    [DataRow("Lines=0", 9300, "IT1001", 0)]
    [DataRow("", 0, "IT1001", 0)]
    public void Settings_and_port_are_checked_against_what_the_transport_declares(string settings, int port, string? code, int lines)
    {
        var reference = new ExternalTransportReference(ThisAssembly, "LoadingProbe", settings);

        if (code is null)
        {
            var (transport, values) = reference.Resolve(port);
            Assert.AreEqual(lines, values.ValueOf((TransportSetting<int>)transport.Settings.Single()));
        }
        else
            Assert.AreEqual(code, Assert.ThrowsExactly<IntegrationException>(() => reference.Resolve(port)).Code);
    }

    [TestMethod]
    [DataRow("AllAtOnce", 1, null, 0)]
    [DataRow("BreaksOnce", 1, null, 1)]
    [DataRow("Stray", 1, "IT2004", 0)]
    [DataRow("Twice", 1, "IT2004", 0)]
    [DataRow("LeavesOne", 1, "IT3002", 0)]
    [DataRow("AllAtOnce", 2, "IT1001", 0)]
    public void What_the_suite_checks_of_an_external_client(string mode, int clients, string? code, int reconnects)
    {
        using var databases = new DisposableSqlite();
        var engine = new FakeBuildEngine();
        var client = new ExternalClient
        {
            BuildEngine = engine, TransportAssembly = ThisAssembly, Name = "Fabricating", Settings = $"Mode={mode}", Clients = clients,
            ClientConnString = databases.Value.Client.ConnectionString, TotalBatches = 6, BatchSize = 2000, // batches long enough to meet
        };

        var succeeded = client.Execute();

        if (code is null)
            Assert.AreEqual((true, 12_000L, reconnects), (succeeded, client.Records, client.Reconnects), engine.Log);
        else
            Assert.AreEqual((false, code), (succeeded, engine.Errors.Single().Code), engine.Log);
    }

    [TestMethod]
    public async Task Bytes_through_a_connection_the_suite_opens_are_counted_by_the_suite()
    {
        using var databases = new DisposableSqlite();
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        var answering = Task.Run(async () =>
        {
            using var peer = await listener.AcceptTcpClientAsync();
            var stream = peer.GetStream();
            var request = new byte[1];
            while (await stream.ReadAsync(request) == 1)
                await stream.WriteAsync(new byte[4]);
        });
        var engine = new FakeBuildEngine();
        var client = new ExternalClient
        {
            BuildEngine = engine, TransportAssembly = ThisAssembly, Name = "Connecting", Port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port,
            ClientConnString = databases.Value.Client.ConnectionString, TotalBatches = 3, BatchSize = 5,
        };

        var succeeded = client.Execute();
        await answering.WaitAsync(TimeSpan.FromSeconds(10));

        Assert.AreEqual((true, 15L, 3L, 12L), (succeeded, client.Records, client.BytesSent, client.BytesReceived), engine.Log);
    }

    [TestMethod]
    public void A_client_that_counts_nothing_is_reported_as_not_measured()
    {
        using var databases = new DisposableSqlite();
        var engine = new FakeBuildEngine();
        var client = new ExternalClient
        {
            BuildEngine = engine, TransportAssembly = ThisAssembly, Name = "Fabricating", ClientConnString = databases.Value.Client.ConnectionString,
            TotalBatches = 2, BatchSize = 10,
        };

        Assert.AreEqual((true, 0L, 0L), (client.Execute(), client.BytesSent, client.BytesReceived), engine.Log);
        StringAssert.Contains(engine.Log, "ClientSession.ConnectAsync");
    }

    [TestMethod]
    public void A_port_that_is_not_its_propertys_value_is_refused_since_the_relay_could_not_stand_in_front_of_it()
    {
        using var databases = new DisposableSqlite();
        var engine = new FakeBuildEngine { GlobalProperties = { ["MyTransportPort"] = "41000" } };
        var client = new ExternalClient
        {
            BuildEngine = engine, TransportAssembly = ThisAssembly, Name = "Fabricating", Port = 9300, PortProperty = "MyTransportPort",
            ClientConnString = databases.Value.Client.ConnectionString, TotalBatches = 2, BatchSize = 10,
        };

        Assert.AreEqual((false, ErrorCodes.InvalidParameter, 0L), (client.Execute(), engine.Errors.Single().Code, client.Records));
    }

    [TestMethod]
    [DataRow("0.0.0.0")]
    [DataRow("10.99.0.1")]
    public void A_server_beyond_loopback_is_refused_before_it_binds_unless_its_transport_authenticates_clients(string bindAddress)
    {
        using var databases = new DisposableSqlite();
        var engine = new FakeBuildEngine();
        var server = new ExternalServer
        {
            BuildEngine = engine, TransportAssembly = ThisAssembly, Name = "LoadingProbe", BindAddress = bindAddress, Port = TestPorts.Free(),
            ServerConnString = databases.Value.Server.ConnectionString,
        };

        Assert.IsFalse(server.Execute());
        Assert.AreEqual(ErrorCodes.InvalidParameter, engine.Errors.Single().Code);
        StringAssert.Contains(engine.Errors.Single().Message, "AuthenticatesClients");
    }

    [TestMethod]
    public void The_sample_pins_the_suites_version()
    {
        string Version(string file, string pattern) =>
            Regex.Match(File.ReadAllText(Path.Combine(RepositoryPaths.Root, file)), pattern).Groups[1].Value;
        var suite = Version("version.props", @"<IntegrationTasksVersion[^>]*>([^<]+)<");

        Assert.AreEqual((suite, suite), (Version("samples/MeasureMyTransport/global.json", "\"IntegrationTasks.Sdk\": \"([^\"]+)\""),
            Version("samples/MeasureMyTransport/Directory.Build.props", @"<IntegrationTasksVersion[^>]*>([^<]+)<")));
        Assert.AreNotEqual("", suite);
    }

    [TestMethod]
    public void The_seam_makes_public_exactly_the_types_its_public_API_file_lists()
    {
        var listed = File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "tasks/IntegrationTasks.Abstractions/PublicAPI.Shipped.txt"))
            .Concat(File.ReadAllLines(Path.Combine(RepositoryPaths.Root, "tasks/IntegrationTasks.Abstractions/PublicAPI.Unshipped.txt")))
            .Where(line => Regex.IsMatch(line, @"^[A-Za-z_][\w.]*(<[\w, ]+>)?$")).ToHashSet(StringComparer.Ordinal);
        // A generic type is listed with its parameters' names (TransportSetting<T>), exported with their count (TransportSetting`1).
        var exported = typeof(Transport).Assembly.GetExportedTypes()
            .Select(t => Regex.Replace(t.FullName!.Replace('+', '.'), @"`\d+$", _ => $"<{string.Join(", ", t.GetGenericArguments().Select(a => a.Name))}>"))
            .ToHashSet(StringComparer.Ordinal);

        CollectionAssert.AreEquivalent(listed.Order().ToArray(), exported.Order().ToArray());
        CollectionAssert.IsSubsetOf(new[]
        {
            "IntegrationTasks.Abstractions.Transport", "IntegrationTasks.Abstractions.TransportClient", "IntegrationTasks.Abstractions.ClientSession",
            "IntegrationTasks.Abstractions.TransportServer", "IntegrationTasks.Abstractions.ServerSession", "IntegrationTasks.Abstractions.IServiceTableReader",
            "IntegrationTasks.Abstractions.ServiceRecord", "IntegrationTasks.Abstractions.RecordFrames", "IntegrationTasks.Abstractions.TransportException",
        }, exported.ToArray());
    }
}
