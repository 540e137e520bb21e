using NATS.Client.Core;
using NATS.Client.JetStream;

namespace IntegrationTasks.Tests;

/// <summary>
/// The suite's own nats-server for the NATS tests: started once (as StartNats starts it) and stopped after the run. The test command
/// installs nats-server; without it these tests fail.
/// </summary>
internal static class TestNats
{
    private static readonly Lazy<BrokerProcess<NatsServerOptions>> Server = new(() => Start(Directory.CreateTempSubdirectory("it-nats-").FullName));

    public static string Url => Server.Value.Options.Url;
    public static int Port => Server.Value.Options.Port;

    /// <summary>A server of the test's own (one it may stop and start again), on a free port.</summary>
    public static BrokerProcess<NatsServerOptions> Start(string directory, int? port = null, int maxPayloadBytes = NatsDefaults.NatsMaxPayloadBytes,
        int maxConnections = NatsDefaults.NatsMaxConnections) =>
        NatsServerProcess.StartAsync(new NatsServerOptions
            {
                Directory = directory, Port = port ?? TestPorts.Free(), MaxPayloadBytes = maxPayloadBytes, MaxConnections = maxConnections,
            },
            log: null, TimeSpan.FromSeconds(60), CancellationToken.None).GetAwaiter().GetResult();

    public static void StopIfStarted() => SharedBroker.StopIfStarted(Server, (broker, token) => broker.StopAsync(token), broker => broker.Options.Directory);

    /// <summary>Deletes the JetStream streams (and with them their consumers) so that tests do not see each other's messages.</summary>
    public static async Task PurgeAsync()
    {
        await using var connection = new NatsConnection(new NatsOpts { Url = Url });
        var js = new NatsJSContext(connection);
        foreach (var stream in new[] { JetStreamTopology.RequestStream, JetStreamTopology.ReplyStream })
        {
            try
            {
                await js.DeleteStreamAsync(stream);
            }
            catch (NatsJSApiException e) when (e.Error.Code == 404)
            {
            }
        }
    }
}
