using System.Diagnostics;

namespace IntegrationTasks.Hosting;

/// <summary>Runs a command to completion with a timeout (its whole tree killed beyond it), capturing its output.</summary>
public static class ExternalCommand
{
    public sealed record Outcome(int ExitCode, string Output, string Errors);

    /// <exception cref="IntegrationException">IT3004 when the timeout passes; IT4008 when the program cannot be started.</exception>
    public static async Task<Outcome> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan timeout, CancellationToken cancellationToken,
        IReadOnlyDictionary<string, string>? environment = null, string? installHint = null)
    {
        var info = new ProcessStartInfo(fileName) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
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
}
