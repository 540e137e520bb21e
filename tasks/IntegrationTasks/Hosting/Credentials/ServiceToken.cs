using System.Net;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;

namespace IntegrationTasks.Hosting;

/// <summary>
/// The bearer token the web services (the ASP.NET Core host's HTTP, REST, gRPC, WebSocket and SOAP endpoints) take, kept in one
/// owner-only JSON file (<c>{"token": …}</c>) the server's start makes when it is missing and never replaces, so a user may bring
/// their own. The token is never logged: this object prints nothing of it.
/// </summary>
public sealed class ServiceToken
{
    private ServiceToken(string token) => Token = token;

    /// <summary>The token itself: letters, digits and <c>-._~+/=</c> (RFC 6750's token68).</summary>
    public string Token { get; }

    /// <summary>The token's file in CredentialsFolder (the targets' <c>_ServiceTokenFile</c> names the same).</summary>
    public const string FileName = "Services.json";

    /// <summary>The value of a request's Authorization header.</summary>
    public string AuthorizationHeader => "Bearer " + Token;

    public override string ToString() => "a bearer token";

    /// <summary>Whether a server bound to <paramref name="bindAddress"/> is reached from beyond this machine's loopback, where nothing may listen without credentials.</summary>
    public static bool ListensBeyondLoopback(string bindAddress) =>
        !string.Equals(bindAddress, "localhost", StringComparison.OrdinalIgnoreCase) && !(IPAddress.TryParse(bindAddress, out var address) && IPAddress.IsLoopback(address));

    /// <summary>
    /// A server's start: refused with IT1001 when it would listen beyond loopback with neither a token file nor client certificates;
    /// otherwise the token in <paramref name="file"/> (made there when missing), or none when no file is given.
    /// </summary>
    public static ServiceToken? ForServer(string serverName, string bindAddress, string file, bool clientCertificates)
    {
        if (file.Length == 0)
            return ListensBeyondLoopback(bindAddress) && !clientCertificates
                ? throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"{serverName} would listen on {bindAddress}, beyond loopback, without credentials: nothing listens there without them. Run with ServiceToken=true (its clients too, with CredentialsFolder's Services.json copied to them), or Tls=true with ClientCertificates=true.")
                : null;
        return File.Exists(file) ? Read(file) : Make(file);
    }

    /// <summary>A client's: the token in <paramref name="file"/>, none when no file is given; a missing or unreadable file is IT1001.</summary>
    public static ServiceToken? Load(string file) =>
        file.Length == 0 ? null
        : File.Exists(file) ? Read(file)
        : throw new IntegrationException(ErrorCodes.InvalidParameter,
            $"No service token at {file}: the suite's server makes it when it starts; a server of your own needs a file {{\"token\": …}} there.");

    /// <summary>Whether an Authorization header carries this token (compared in constant time).</summary>
    public bool Admits(string? authorization) =>
        authorization is not null
        && CryptographicOperations.FixedTimeEquals(Encoding.ASCII.GetBytes(authorization), Encoding.ASCII.GetBytes(AuthorizationHeader));

    private static ServiceToken Make(string file)
    {
        OwnerOnlyFiles.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(file))!);
        var token = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(32));
        OwnerOnlyFiles.Write(file, JsonSerializer.Serialize(new Dictionary<string, string> { ["token"] = token }) + "\n");
        return new ServiceToken(token);
    }

    private static ServiceToken Read(string file)
    {
        try
        {
            using var document = JsonDocument.Parse(File.ReadAllText(file));
            var token = document.RootElement.GetProperty("token").GetString();
            if (string.IsNullOrEmpty(token) || token.Any(c => !char.IsAsciiLetterOrDigit(c) && c is not ('-' or '.' or '_' or '~' or '+' or '/' or '=')))
                throw new FormatException("the token must be letters, digits and -._~+/= only (a bearer token's characters)");
            return new ServiceToken(token);
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or FormatException or IOException or UnauthorizedAccessException)
        {
            // Not the file's text: it holds the token.
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"The service token at {file} is not usable ({e.GetType().Name}): {(e is FormatException ? e.Message : "a JSON object {\"token\": …} is expected")}.", e);
        }
    }
}
