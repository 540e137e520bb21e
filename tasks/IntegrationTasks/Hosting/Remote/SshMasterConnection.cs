using System.Diagnostics;

namespace IntegrationTasks.Hosting.Remote;

/// <summary>
/// One ssh connection to a machine that every later command to it shares (OpenSSH's connection multiplexing): the machine is signed
/// in to once, and each command, a server among them, is a session of this connection. Disposing it ends the connection, and with it
/// every session still open there: their remote processes see their input close and their output break, as when a link is lost.
/// </summary>
public sealed class SshMasterConnection : IAsyncDisposable
{
    private readonly Process _process;

    private SshMasterConnection(Process process, SshMachine machine)
    {
        _process = process;
        Machine = machine;
    }

    /// <summary>The machine, its commands going through this connection.</summary>
    public SshMachine Machine { get; }

    /// <summary>
    /// A socket path must fit a Unix socket's 108 bytes, with the 17 that ssh adds while it makes it, and be one word ssh takes as it
    /// is (no white space, no '%' token): another cannot be used, and then each command connects on its own (null).
    /// </summary>
    public static string? UsableControlPath(string path) =>
        System.Text.Encoding.UTF8.GetByteCount(path) <= 88 && !path.Any(c => char.IsWhiteSpace(c) || c is '%' or '"' or '\'') ? path : null;

    /// <summary>Connects (IT4017 or IT4018 when ssh cannot) and returns once the connection takes sessions.</summary>
    public static async Task<SshMasterConnection> OpenAsync(SshMachine machine, string controlPath, CancellationToken cancellationToken)
    {
        var shared = machine with { ControlPath = controlPath };
        // The connection's own session says when it is up (ssh listens on the socket before it opens a session), then waits for its
        // input to close; it is never closed from here: disposing ends the connection itself.
        string[] words = [.. shared.SshWords(master: true), "--", "echo ready; exec cat >/dev/null"];
        var info = new ProcessStartInfo(words[0])
        {
            RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false,
        };
        foreach (var word in words.Skip(1))
            info.ArgumentList.Add(word);
        if (File.Exists(controlPath))
            File.Delete(controlPath); // a socket left by a killed build: ssh will not listen where one is
        var process = Process.Start(info) ?? throw new IntegrationException(ErrorCodes.ProgramNotFound, "Cannot run ssh.");
        var connection = new SshMasterConnection(process, shared);
        var errors = process.StandardError.ReadToEndAsync(CancellationToken.None);
        try
        {
            using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timer.CancelAfter(SshMachine.ConnectTimeout * 2);
            var line = await process.StandardOutput.ReadLineAsync(timer.Token).ConfigureAwait(false);
            if (line?.Trim() == "ready")
            {
                _ = process.StandardOutput.ReadToEndAsync(CancellationToken.None); // nothing more, but never a full pipe
                return connection;
            }
            await process.WaitForExitAsync(timer.Token).ConfigureAwait(false);
            throw machine.Failure(await errors.ConfigureAwait(false));
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw new IntegrationException(ErrorCodes.RemoteUnreachable, $"ssh {machine.Destination} did not open a connection within {(SshMachine.ConnectTimeout * 2).TotalSeconds:F0} s.");
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Completes when the connection ends on its own: a lost link (ssh's keep-alives give up after 15 s), the machine gone.</summary>
    public Task Lost => _process.WaitForExitAsync();

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
                _process.Kill(entireProcessTree: true);
            using var timer = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            await _process.WaitForExitAsync(timer.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException)
        {
        }
        _process.Dispose();
        if (Machine.ControlPath is { } socket && File.Exists(socket))
            File.Delete(socket);
    }
}
