namespace IntegrationTasks.Common;

/// <summary>Every error code the suite logs, one meaning each (docs/errors.md says what each means and what to do).</summary>
public static class ErrorCodes
{
    // Configuration and parameters
    public const string InvalidParameter = "IT1001";
    public const string UnknownProvider = "IT1002";
    public const string DatabaseFailure = "IT1003";
    public const string MissingServerRows = "IT1004";

    // Wire format
    public const string MalformedXml = "IT2001";
    public const string InvalidFieldValue = "IT2002";
    public const string UnencodableValue = "IT2003";
    public const string FrameTooLarge = "IT2101";
    public const string TruncatedFrame = "IT2102";
    public const string MalformedMessage = "IT2004";
    public const string BatchTooLarge = "IT2005";
    public const string InvalidFrameLength = "IT2103";

    // Transfers
    public const string VerificationFailed = "IT3001";
    public const string TransferFailed = "IT3002";
    public const string ConnectionFailed = "IT3003";
    public const string Timeout = "IT3004";
    public const string RequestRefused = "IT3005";
    public const string ConnectionLost = "IT3006";
    public const string ConnectionStalled = "IT3007";
    public const string ServerBusy = "IT3008";
    public const string TlsRefused = "IT3009";
    public const string CredentialsRefused = "IT3010";

    // Hosting
    public const string PortInUse = "IT4001";
    public const string ServerNotReady = "IT4002";
    public const string ServerExited = "IT4003";
    public const string ServerNotRunning = "IT4004";
    public const string ServerStopTimeout = "IT4005";
    public const string BrokerUnavailable = "IT4006";
    public const string ServiceUnavailable = "IT4007";
    public const string ProgramNotFound = "IT4008";
    public const string NeedsRoot = "IT4009";
    public const string NetworkSetupFailed = "IT4010";
    public const string LeftoverRemoved = "IT4011";
    public const string ServerRestarted = "IT4012";
    public const string FaultInjected = "IT4013";
    public const string FaultNotInjected = "IT4014";
    public const string BuildTerminated = "IT4015";
    public const string ClientProcessFailed = "IT4016";
    public const string RemoteUnreachable = "IT4017";
    public const string RemoteHostKeyUnknown = "IT4018";
    public const string RemotePrerequisiteMissing = "IT4019";
    public const string RemoteDataSetDiffers = "IT4020";

    // Results
    public const string ResultsUnreadable = "IT5001";
    public const string MissingBaseline = "IT5002";
    public const string Regression = "IT5003";
    public const string ResultsNotComparable = "IT5004";
    public const string ComparedTransportMissing = "IT5005";
    public const string MachineNoisy = "IT5006";

    // Labs
    public const string LabFailed = "IT6001";

    public const string Unexpected = "IT9999";
}
