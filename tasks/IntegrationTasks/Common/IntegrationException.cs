namespace IntegrationTasks.Common;

/// <summary>A failure the user can act on: carries a stable <c>ITnnnn</c> code for the build log.</summary>
public class IntegrationException : Exception
{
    public IntegrationException(string code, string message, Exception? inner = null)
        : base(message, inner) => Code = code;

    public string Code { get; }

    public override string ToString() => $"{Code}: {Message}";
}
