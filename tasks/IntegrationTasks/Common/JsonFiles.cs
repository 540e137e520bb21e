using System.Text.Json;
using System.Text.Json.Serialization;

namespace IntegrationTasks.Common;

/// <summary>The one JSON shape of every file the suite writes (results, server stats, lab results).</summary>
public static class JsonFiles
{
    public static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals, // a p-value of one run is NaN
        WriteIndented = false,
    };
}
