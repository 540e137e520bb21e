namespace IntegrationTasks.Hosting;

/// <summary>
/// Whether a server may listen where it is told: nothing of the suite serves ServiceTable beyond loopback to a client that has not
/// proved who it is. A protocol whose only credential is a TLS client certificate listens there only with both; one with no credential
/// the suite sets up does not listen there at all.
/// </summary>
public static class ListenerExposure
{
    /// <summary>IT1001 naming the fix when a server of a protocol whose only credential is a client certificate would listen beyond loopback without one.</summary>
    public static void RequireClientCertificatesBeyondLoopback(string serverName, string bindAddress, bool tls, bool clientCertificates)
    {
        if (ServiceToken.ListensBeyondLoopback(bindAddress) && !(tls && clientCertificates))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{serverName} would listen on {bindAddress}, beyond loopback, serving ServiceTable to anyone who connects: its protocol carries no credential of its own. Run it with Tls=true and ClientCertificates=true (its clients given the client certificate), or on loopback.");
    }

    /// <summary>IT1001 when a server with no credential the suite sets up would listen beyond loopback.</summary>
    public static void RequireLoopback(string serverName, string bindAddress, string why)
    {
        if (ServiceToken.ListensBeyondLoopback(bindAddress))
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{serverName} would listen on {bindAddress}, beyond loopback, serving ServiceTable to anyone who connects: {why} Run it on loopback.");
    }
}
