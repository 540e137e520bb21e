using System.Text.Json;
using IntegrationTasks.Transfer;

namespace IntegrationTasks.Results;

/// <summary>A results.json as written: the environment it was measured in and its runs.</summary>
public sealed record ResultsFile(IReadOnlyDictionary<string, string> Environment, IReadOnlyList<Measurement> Measurements)
{
    public static ResultsFile Load(string path)
    {
        try
        {
            using var document = JsonDocument.Parse(File.ReadAllText(path));
            var environment = document.RootElement.TryGetProperty("environment", out var env)
                ? env.EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetString() ?? "")
                : new Dictionary<string, string>();
            var measurements = document.RootElement.GetProperty("measurements").EnumerateArray()
                .Select(m => m.Deserialize<Measurement>(MeasurementLog.Json)!).ToList();
            return new ResultsFile(environment, measurements);
        }
        catch (Exception e) when (e is IOException or JsonException or KeyNotFoundException or InvalidOperationException)
        {
            throw new IntegrationException(ErrorCodes.ResultsUnreadable, $"{path} is not a results file of this suite: {e.Message}", e);
        }
    }
}
