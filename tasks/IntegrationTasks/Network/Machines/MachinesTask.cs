using IntegrationTasks.Hosting.Remote;

namespace IntegrationTasks.Network;

/// <summary>What every task that reaches other machines is given: which machines, how ssh reaches them, where the suite goes.</summary>
public abstract class MachinesTask : IntegrationTask
{
    /// <summary>The machine that runs the servers and brokers, <c>[user@]host</c>.</summary>
    [Required] public string ServerMachine { get; set; } = "";

    /// <summary>Machines that run clients, <c>a+b</c>; empty: the clients run here.</summary>
    public string ClientMachines { get; set; } = "";

    /// <summary>An ssh config file to use instead of the user's (<c>ssh -F</c>): keys, known hosts, ports, jump hosts.</summary>
    public string SshConfig { get; set; } = "";

    /// <summary>Where each machine keeps the suite's copies (relative to the user's home unless absolute).</summary>
    public string RemoteFolder { get; set; } = SuiteDeployment.DefaultFolder;

    /// <summary>The suite's own folder (build.proj's) and the configuration its tasks were built in.</summary>
    [Required] public string Root { get; set; } = "";
    public string Configuration { get; set; } = "Release";

    /// <summary>The server machine and the client machines as ssh reaches them (IT1001 for a name that is not <c>[user@]host</c>).</summary>
    protected (SshMachine Server, List<SshMachine> Clients) Machines()
    {
        var config = SshConfig.Length > 0 ? SshConfig : null;
        return (SshMachine.Parse(ServerMachine, config, nameof(ServerMachine)),
            [.. ClientMachines.Split('+', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(c => SshMachine.Parse(c, config, nameof(ClientMachines)))]);
    }
}
