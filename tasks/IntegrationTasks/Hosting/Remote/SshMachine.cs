using System.Text;
using System.Text.RegularExpressions;

namespace IntegrationTasks.Hosting.Remote;

/// <summary>
/// Another machine, reached through the system's OpenSSH client as the user would: their <c>~/.ssh/config</c>, agent and
/// <c>known_hosts</c> (or the config file given), never a password prompt (BatchMode) and never a host key accepted on trust
/// (StrictHostKeyChecking=yes: an unknown or changed key is IT4018). No agent or daemon of the suite's runs there.
/// </summary>
public sealed partial record SshMachine
{
    private SshMachine(string destination, string? configFile)
    {
        Destination = destination;
        ConfigFile = configFile;
    }

    /// <summary><c>[user@]host</c>, as ssh takes it.</summary>
    public string Destination { get; }

    /// <summary>An ssh config file used instead of the user's (<c>ssh -F</c>); null: the user's own.</summary>
    public string? ConfigFile { get; }

    /// <summary>
    /// The socket of a master connection (<see cref="SshMasterConnection"/>) this machine's commands go through, each a session of
    /// that one connection: no sign-in per command, and cutting the master cuts them all. Null: each command connects on its own.
    /// </summary>
    public string? ControlPath { get; init; }

    /// <summary>How long ssh may take to connect and sign in; a remote that stops answering is given up after 3 × 5 s.</summary>
    public static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(10);

    /// <summary>A machine named by a property (<paramref name="property"/> in the message); IT1001 for what is not <c>[user@]host</c>.</summary>
    public static SshMachine Parse(string value, string? configFile, string property)
    {
        var destination = value.Trim();
        if (!DestinationPattern().IsMatch(destination))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{property} is a machine as ssh names it, [user@]host (letters, digits, '.', '-', '_', ':'), an alias of ~/.ssh/config or an address (was '{value}').");
        if (configFile is { Length: > 0 } && !File.Exists(configFile))
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"SshConfig: no file at {configFile}.");
        return new SshMachine(destination, configFile is { Length: > 0 } ? Path.GetFullPath(configFile) : null);
    }

    [GeneratedRegex(@"^(?:[A-Za-z0-9._][A-Za-z0-9._-]*@)?[A-Za-z0-9_][A-Za-z0-9._:-]*$")]
    private static partial Regex DestinationPattern();

    /// <summary>The host part (after any user@).</summary>
    public string Host => Destination[(Destination.IndexOf('@') + 1)..];

    /// <summary>ssh's own words before the remote command: batch mode, strict host keys, keep-alives, the config file.</summary>
    public IReadOnlyList<string> SshWords() => SshWords(master: false);

    /// <param name="master">The words of the master connection itself (which makes <see cref="ControlPath"/>'s socket).</param>
    internal IReadOnlyList<string> SshWords(bool master) =>
    [
        "ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
        "-o", $"ConnectTimeout={(int)ConnectTimeout.TotalSeconds}", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
        .. ConfigFile is null ? Array.Empty<string>() : ["-F", ConfigFile],
        .. ControlPath is null ? Array.Empty<string>() : ["-o", $"ControlPath={ControlPath}", "-o", master ? "ControlMaster=yes" : "ControlMaster=no", "-o", "ControlPersist=no"],
        Destination,
    ];

    /// <summary>The words that run <paramref name="remote"/> on this machine (each quoted for the remote shell).</summary>
    public IReadOnlyList<string> Command(IReadOnlyList<string> remote) => [.. SshWords(), "--", string.Join(' ', remote.Select(Quote))];

    /// <summary>A word for a POSIX shell: in single quotes, any single quote closed, escaped and reopened.</summary>
    public static string Quote(string word) =>
        word.Length > 0 && SafeWord().IsMatch(word) ? word : "'" + word.Replace("'", "'\\''", StringComparison.Ordinal) + "'";

    [GeneratedRegex(@"^[A-Za-z0-9_./:=@%+,-]+$")]
    private static partial Regex SafeWord();

    /// <summary>Runs a command there to its end: its exit code and output; ssh's own failures as coded errors (<see cref="Failure"/>).</summary>
    public async Task<ExternalCommand.Outcome> RunAsync(IReadOnlyList<string> remote, TimeSpan timeout, CancellationToken cancellationToken,
        Func<Stream, CancellationToken, Task>? input = null)
    {
        var words = Command(remote);
        ExternalCommand.Outcome outcome;
        try
        {
            // ssh forwards its input to the command there: without input of its own it is given an empty one, never the build's.
            outcome = await ExternalCommand.RunAsync(words[0], words.Skip(1), timeout, cancellationToken,
                installHint: "Install the OpenSSH client (apt-get install -y openssh-client).", input: input ?? NoInput).ConfigureAwait(false);
        }
        catch (IntegrationException e) when (e.Code == ErrorCodes.Timeout)
        {
            throw new IntegrationException(ErrorCodes.Timeout, $"ssh {Destination} did not finish within {timeout.TotalSeconds:F0} s.", e);
        }
        return IsSshsOwnFailure(outcome) ? throw Failure(outcome.Errors) : outcome;
    }

    private static Task NoInput(Stream input, CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>ssh exits 255 for its own failures, and so may a remote command: only ssh's own words make it one of ssh's.</summary>
    private static bool IsSshsOwnFailure(ExternalCommand.Outcome outcome) =>
        outcome.ExitCode == 255 && (outcome.Errors.Contains("ssh:", StringComparison.Ordinal) || outcome.Errors.Contains("host key", StringComparison.OrdinalIgnoreCase)
                                    || outcome.Errors.Contains("Permission denied", StringComparison.Ordinal) || outcome.Errors.Contains("Connection", StringComparison.Ordinal)
                                    || outcome.Errors.Length == 0);

    /// <summary>
    /// What ssh's own exit (255) means: an unknown or changed host key is IT4018 (never accepted: the user adds it with
    /// ssh-keyscan after checking it), anything else that kept ssh from a session there is IT4017.
    /// </summary>
    internal IntegrationException Failure(string errors)
    {
        var said = errors.Trim();
        if (said.Contains("Host key verification failed", StringComparison.Ordinal) || said.Contains("REMOTE HOST IDENTIFICATION HAS CHANGED", StringComparison.Ordinal)
            || said.Contains("No ED25519 host key is known", StringComparison.Ordinal) || said.Contains("host key is known", StringComparison.Ordinal))
            return new IntegrationException(ErrorCodes.RemoteHostKeyUnknown,
                $"{Destination}'s host key is not one ssh knows for it, and the suite accepts none on trust: connect once yourself, {string.Join(' ', ["ssh", "-o", "StrictHostKeyChecking=ask", .. ConfigFile is null ? Array.Empty<string>() : ["-F", ConfigFile], Destination])}, check the fingerprint it shows with the machine's owner and accept it. ssh said: {LastLine(said)}");
        return new IntegrationException(ErrorCodes.RemoteUnreachable,
            $"Could not open an ssh session to {Destination} (without a password prompt: a key in the agent or ~/.ssh/config). ssh said: {LastLine(said)}");
    }

    private static string LastLine(string text) =>
        text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).LastOrDefault() ?? "(nothing)";

    public override string ToString() => new StringBuilder(Destination).Append(ConfigFile is null ? "" : $" (ssh -F {ConfigFile})").ToString();
}
