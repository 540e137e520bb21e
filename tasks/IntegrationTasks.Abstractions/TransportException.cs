namespace IntegrationTasks.Abstractions;

/// <summary>What a transport reports as its failure: the suite logs it with <see cref="Code"/> (docs/errors.md) and acts on <see cref="Error"/>.</summary>
public sealed class TransportException : Exception
{
    public TransportException(TransportError error, string message, Exception? innerException = null)
        : base(message, innerException) => Error = error;

    /// <summary>What went wrong.</summary>
    public TransportError Error { get; }

    /// <summary>The suite's error code for it (IT…).</summary>
    public string Code => CodeOf(Error);

    /// <summary>The suite's error code of a transport error.</summary>
    public static string CodeOf(TransportError error) => error switch
    {
        TransportError.InvalidSetting => "IT1001",
        TransportError.MalformedMessage => "IT2004",
        TransportError.BatchTooLarge => "IT2005",
        TransportError.FrameTooLarge => "IT2101",
        TransportError.ConnectionFailed => "IT3003",
        TransportError.RequestRefused => "IT3005",
        TransportError.ConnectionLost => "IT3006",
        TransportError.PortInUse => "IT4001",
        _ => "IT9999",
    };
}

/// <summary>The failures a transport reports, each one of the suite's error codes.</summary>
public enum TransportError
{
    /// <summary>IT1001: a setting missing, unknown or of the wrong form.</summary>
    InvalidSetting,

    /// <summary>IT2004: a message that is not what the protocol says.</summary>
    MalformedMessage,

    /// <summary>IT2005: a request for more records than MaxBatchRecords.</summary>
    BatchTooLarge,

    /// <summary>IT2101: a frame larger than MaxFrameBytes.</summary>
    FrameTooLarge,

    /// <summary>IT3003: the server could not be reached.</summary>
    ConnectionFailed,

    /// <summary>IT3005: the server refused a request (its reason in the message).</summary>
    RequestRefused,

    /// <summary>IT3006: the connection broke mid-transfer (resumed when the transport <see cref="TransportCapabilities.Resumes"/>).</summary>
    ConnectionLost,

    /// <summary>IT4001: the server's port is taken.</summary>
    PortInUse,
}
