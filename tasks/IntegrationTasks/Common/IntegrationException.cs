namespace IntegrationTasks.Common;

/// <summary>A failure the user can act on: carries a stable <c>ITnnnn</c> code for the build log.</summary>
public class IntegrationException : Exception
{
    public IntegrationException(string code, string message, Exception? inner = null)
        : base(message, inner) => Code = code;

    public string Code { get; }

    public override string ToString() => $"{Code}: {Message}";
}

/// <summary>
/// IT3007 for a peer that read none of what it was sent within the timeout: its connection is closed with a reset, since a graceful
/// close would keep the unread bytes queued (the socket in FIN-WAIT-1) for as long as the peer does not read, and never tell it.
/// </summary>
public sealed class PeerStoppedReadingException(string message) : IntegrationException(ErrorCodes.ConnectionStalled, message);
