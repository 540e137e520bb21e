using System.Text.RegularExpressions;

namespace IntegrationTasks.Common;

/// <summary>
/// The one text form of a coded error between processes: "IT1234: message" (an HTTP error body, a file
/// server's error file, a child process's output line "error IT1234: message"), and its parser.
/// </summary>
public static partial class CodedError
{
    public static string Format(string code, string message) => $"{code}: {message}";

    public static string Format(IntegrationException e) => Format(e.Code, e.Message);

    [GeneratedRegex(@"^(?<code>IT\d{4}): (?<message>.*)$", RegexOptions.Singleline)]
    private static partial Regex Text();

    // MSBuild prints "file(line,col): error IT1234: message [project]"; the host prints "error IT1234: message", and its
    // ASP.NET Core logger "warn: Category[0] IT1234: message" (or "fail: …").
    [GeneratedRegex(@"(?:(?:^|\W)(?<severity>error|warning) |^(?<severity>warn|fail): \S+\[\d+\] )(?<code>IT\d{4}): (?<message>.*?)(?: \[[^\]]+\])?$")]
    private static partial Regex LogLine();

    /// <summary>A server's refusal of a batch as the client's error: the server's code where its text carries one, else IT3002.</summary>
    public static IntegrationException Refusal(string text, int batch) =>
        TryParse(text, out var code, out var message)
            ? new IntegrationException(code, $"The server refused batch {batch}: {message}")
            : new IntegrationException(ErrorCodes.TransferFailed, $"The server refused batch {batch}: {text}");

    /// <summary>Reads "IT1234: message"; false for any other text.</summary>
    public static bool TryParse(string text, out string code, out string message)
    {
        var match = Text().Match(text.Trim());
        code = match.Success ? match.Groups["code"].Value : "";
        message = match.Success ? match.Groups["message"].Value : text;
        return match.Success;
    }

    /// <summary>Reads a log line carrying "error IT1234: …" or "warning IT1234: …" (as MSBuild and the host print them).</summary>
    public static bool TryParseLogLine(string line, out bool isError, out string code, out string message)
    {
        var match = LogLine().Match(line);
        isError = match.Success && match.Groups["severity"].Value is "error" or "fail";
        code = match.Success ? match.Groups["code"].Value : "";
        message = match.Success ? match.Groups["message"].Value.Trim() : line;
        return match.Success;
    }
}
