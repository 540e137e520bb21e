using System.Security.Cryptography;
using System.Text.Json;

namespace IntegrationTasks.Queues;

/// <summary>
/// The user and password a broker takes (Redis's ACL user, NATS's user, RabbitMQ's user that is not guest), kept in one
/// owner-only JSON file (<c>{"user": …, "password": …}</c>) the broker's start makes when it is missing and never replaces, so a
/// user may bring their own. The password is never logged: this object prints only its user.
/// </summary>
public sealed class BrokerCredentials
{
    /// <summary>The user the suite makes.</summary>
    public const string GeneratedUserName = "integrationtasks";

    private BrokerCredentials(string userName, string password)
    {
        UserName = userName;
        Password = password;
    }

    public string UserName { get; }
    public string Password { get; }

    public override string ToString() => $"user {UserName}";

    /// <summary>
    /// A broker's start: refused with IT1001 when it would listen beyond loopback with no credentials file given; otherwise the
    /// credentials in <paramref name="file"/> (made there when missing), or none when no file is given.
    /// </summary>
    public static BrokerCredentials? ForBroker(string brokerName, string bindAddress, string file)
    {
        if (file.Length == 0)
            return Hosting.ServiceToken.ListensBeyondLoopback(bindAddress)
                ? throw new IntegrationException(ErrorCodes.InvalidParameter,
                    $"{brokerName} would listen on {bindAddress}, beyond loopback, without credentials: nothing listens there without them. Run with BrokerCredentials=true (its clients too, with CredentialsFolder copied to them).")
                : null;
        return File.Exists(file) ? Read(file) : Make(file);
    }

    /// <summary>A client's or server's: the credentials in <paramref name="file"/>, none when no file is given; a missing or unreadable file is IT1001.</summary>
    public static BrokerCredentials? Load(string file) =>
        file.Length == 0 ? null
        : File.Exists(file) ? Read(file)
        : throw new IntegrationException(ErrorCodes.InvalidParameter,
            $"No broker credentials at {file}: the suite's broker makes them when it starts; a broker of your own needs a file {{\"user\": …, \"password\": …}} there.");

    private static BrokerCredentials Make(string file)
    {
        var folder = Path.GetDirectoryName(Path.GetFullPath(file))!;
        OwnerOnlyFiles.CreateDirectory(folder);
        // Letters and digits only: every broker's configuration takes it quoted or hashed without escaping.
        var password = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(24));
        OwnerOnlyFiles.Write(file, JsonSerializer.Serialize(new Dictionary<string, string> { ["user"] = GeneratedUserName, ["password"] = password }) + "\n");
        return new BrokerCredentials(GeneratedUserName, password);
    }

    private static BrokerCredentials Read(string file)
    {
        try
        {
            using var document = JsonDocument.Parse(File.ReadAllText(file));
            var user = document.RootElement.GetProperty("user").GetString();
            var password = document.RootElement.GetProperty("password").GetString();
            if (string.IsNullOrEmpty(user) || string.IsNullOrEmpty(password) || user.Any(c => !char.IsAsciiLetterOrDigit(c) && c is not ('-' or '_' or '.'))
                || password.Any(c => char.IsControl(c) || c is '"' or '\\' or ' '))
                throw new FormatException("the user must be letters, digits, '-', '_' or '.', and the password must not hold spaces, quotes, backslashes or control characters");
            return new BrokerCredentials(user, password);
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or FormatException or IOException or UnauthorizedAccessException)
        {
            // Not the file's text: it may hold the password.
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"The broker credentials at {file} are not usable ({e.GetType().Name}): {(e is FormatException ? e.Message : "a JSON object {\"user\": …, \"password\": …} is expected")}.", e);
        }
    }
}
