using IntegrationTasks.Hosting.Remote;

namespace IntegrationTasks.Tests;

/// <summary>
/// Debian's sshd as another machine's: its own host key, one authorized key made for the test, listening on a loopback port
/// (or an address inside a namespace, with a launch prefix), and an ssh config (<see cref="ConfigFile"/>) that reaches it with that
/// key and knows its host key. Stopped, with every session it holds, when disposed.
/// </summary>
internal sealed class TestSshServer(System.Diagnostics.Process sshd, string folder, string address) : IDisposable
{
    public string Folder => folder;
    public string Address => address;

    /// <summary>The client's ssh config: the key, the port, and known_hosts holding the server's key.</summary>
    public string ConfigFile => Path.Combine(Folder, "ssh_config");

    /// <summary>The same, with a known_hosts that does not hold the server's key.</summary>
    public string UnknownHostConfigFile => Path.Combine(Folder, "ssh_config_unknown_host");

    public SshMachine Machine(string? configFile = null) => SshMachine.Parse($"root@{Address}", configFile ?? ConfigFile, "ServerMachine");

    public static TestSshServer Start(string folder, string address = "127.0.0.1", int? port = null, IReadOnlyList<string>? prefix = null)
    {
        Directory.CreateDirectory(folder);
        if (!OperatingSystem.IsWindows())
            File.SetUnixFileMode(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        var listenPort = port ?? TestPorts.Free();
        foreach (var key in new[] { "host_key", "client_key" })
            Check(RepositoryPaths.Run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", key, "-f", Path.Combine(folder, key)]), "ssh-keygen");
        File.Copy(Path.Combine(folder, "client_key.pub"), Path.Combine(folder, "authorized_keys"));
        var hostKey = File.ReadAllText(Path.Combine(folder, "host_key.pub")).Split(' ');
        // known_hosts names a host on ssh's own port plainly, on any other as [host]:port.
        File.WriteAllText(Path.Combine(folder, "known_hosts"), $"{(listenPort == 22 ? address : $"[{address}]:{listenPort}")} {hostKey[0]} {hostKey[1]}\n");
        File.WriteAllText(Path.Combine(folder, "empty_known_hosts"), "");
        File.WriteAllText(Path.Combine(folder, "sshd_config"), string.Join('\n',
            $"ListenAddress {address}:{listenPort}", $"HostKey {folder}/host_key", $"PidFile {folder}/sshd.pid", $"AuthorizedKeysFile {folder}/authorized_keys",
            "StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password",
            // A session's bash does not read this machine's ~/.bashrc (bash skips it below the top shell level): the other machine's
            // start-up files are its own, and a start-up tool cut by a killed session here (a rehash lock) must not stall the next.
            "SetEnv SHLVL=1", "") );
        foreach (var (file, knownHosts) in new[] { ("ssh_config", "known_hosts"), ("ssh_config_unknown_host", "empty_known_hosts") })
            File.WriteAllText(Path.Combine(folder, file), string.Join('\n',
                $"Host {address}", $"  Port {listenPort}", $"  IdentityFile {folder}/client_key", "  IdentitiesOnly yes",
                $"  UserKnownHostsFile {folder}/{knownHosts}", "  GlobalKnownHostsFile /dev/null", ""));
        // sshd's privilege separation needs its empty directory, as Debian's service makes it at boot.
        Directory.CreateDirectory("/run/sshd");
        string[] command = [.. prefix ?? [], "/usr/sbin/sshd", "-D", "-e", "-f", Path.Combine(folder, "sshd_config")];
        var info = new System.Diagnostics.ProcessStartInfo(command[0]) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        foreach (var word in command.Skip(1))
            info.ArgumentList.Add(word);
        var sshd = System.Diagnostics.Process.Start(info)!;
        var ready = Task.Run(() =>
        {
            while (sshd.StandardError.ReadLine() is { } line)
                if (line.Contains("Server listening", StringComparison.Ordinal))
                    return true;
            return false;
        });
        if (!ready.Wait(TimeSpan.FromSeconds(20)) || !ready.Result)
        {
            sshd.Kill(entireProcessTree: true);
            throw new InvalidOperationException("sshd did not start listening");
        }
        // Its later lines are read and dropped, so that it never blocks on a full pipe.
        _ = Task.Run(() => { while (sshd.StandardError.ReadLine() is not null) { } });
        return new TestSshServer(sshd, folder, address);
    }

    private static void Check((int ExitCode, string Stdout, string Stderr) outcome, string what)
    {
        if (outcome.ExitCode != 0)
            throw new InvalidOperationException($"{what} failed: {outcome.Stderr}");
    }

    public void Dispose()
    {
        sshd.Kill(entireProcessTree: true);
        sshd.WaitForExit(10_000);
        sshd.Dispose();
    }
}
