namespace IntegrationTasks.Common;

/// <summary>The build's Tls: false, true, or both ("false+true", a plaintext pass and a TLS pass), as its values in the order given.</summary>
public static class TlsSetting
{
    public static List<bool> Values(string tls)
    {
        var values = tls.Split('+', ';').Select(t => t.Trim()).Where(t => t.Length > 0).Distinct(StringComparer.OrdinalIgnoreCase).ToList();
        return values.Count == 0 ? [false]
            : [.. values.Select(v => bool.TryParse(v, out var on) ? on
                : throw new IntegrationException(ErrorCodes.InvalidParameter, $"Tls must be true, false or false+true (was '{tls}')."))];
    }
}
