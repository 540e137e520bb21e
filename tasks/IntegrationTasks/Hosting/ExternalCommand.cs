using System.Diagnostics;

namespace IntegrationTasks.Hosting;

/// <summary>Runs a command to completion with a timeout (its whole tree killed beyond it), capturing its output.</summary>
public static class ExternalCommand
{
    public sealed record Outcome(int ExitCode, string Output, string Errors);

    /// <param name="input">What the command reads, written while it runs (its input is closed after); none: it reads nothing.</param>
    /// <exception cref="IntegrationException">IT3004 when the timeout passes; IT4008 when the program cannot be started.</exception>
    public static async Task<Outcome> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan timeout, CancellationToken cancellationToken,
        IReadOnlyDictionary<string, string>? environment = null, string? installHint = null, Func<Stream, CancellationToken, Task>? input = null)
    {
        var info = new ProcessStartInfo(fileName)
        {
            RedirectStandardInput = input is not null, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false,
        };
        foreach (var argument in arguments)
            info.ArgumentList.Add(argument);
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
            info.Environment[name] = value;
        Process process;
        try
        {
            process = Process.Start(info)!;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new IntegrationException(ErrorCodes.ProgramNotFound, $"Cannot run {fileName}: {e.Message}.{(installHint is null ? "" : " " + installHint)}", e);
        }
        using (process)
        {
            var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
            var errors = process.StandardError.ReadToEndAsync(cancellationToken);
            using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timer.CancelAfter(timeout);
            try
            {
                if (input is not null)
                    await WriteInputAsync(process, input, timer.Token).ConfigureAwait(false);
                await process.WaitForExitAsync(timer.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                cancellationToken.ThrowIfCancellationRequested();
                throw new IntegrationException(ErrorCodes.Timeout, $"{Path.GetFileName(fileName)} did not finish within {timeout.TotalSeconds:F0} s.");
            }
            return new Outcome(process.ExitCode, await output.ConfigureAwait(false), await errors.ConfigureAwait(false));
        }
    }

    private static async Task WriteInputAsync(Process process, Func<Stream, CancellationToken, Task> input, CancellationToken cancellationToken)
    {
        try
        {
            await input(process.StandardInput.BaseStream, cancellationToken).ConfigureAwait(false);
        }
        catch (IOException)
        {
            // The command ended before taking all its input: its exit code and errors say why.
        }
        finally
        {
            process.StandardInput.Close();
        }
    }
}
