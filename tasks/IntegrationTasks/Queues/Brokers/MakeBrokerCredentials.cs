namespace IntegrationTasks.Queues;

/// <summary>
/// A broker's user and password made here (<see cref="BrokerCredentials"/>, owner-only) before its broker starts on a server
/// machine: the clients here sign in with them, and the server machine is sent only that file.
/// </summary>
public sealed class MakeBrokerCredentials : IntegrationTask
{
    [Required] public string Broker { get; set; } = "";
    [Required] public string BindAddress { get; set; } = "";

    /// <summary>The file; empty: the broker runs without credentials (refused beyond loopback).</summary>
    public string File { get; set; } = "";

    protected override Task ExecuteAsync(CancellationToken cancellationToken)
    {
        BrokerCredentials.ForBroker(Broker, BindAddress, File);
        return Task.CompletedTask;
    }
}
