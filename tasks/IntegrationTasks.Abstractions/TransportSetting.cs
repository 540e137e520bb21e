using System.Globalization;

namespace IntegrationTasks.Abstractions;

/// <summary>
/// A setting a transport takes from its <c>ExternalTransport</c> item (<c>Settings="Name=Value,…"</c>): the suite reads and checks
/// every value before a run (a name the transport does not declare, or a value it does not take, is IT1001 naming the requirement),
/// so the client and server read it typed with <see cref="ClientSession.ValueOf"/> and <see cref="ServerSession.ValueOf"/>.
/// </summary>
public abstract class TransportSetting
{
    private protected TransportSetting(string name, string requirement)
    {
        if (string.IsNullOrWhiteSpace(name) || name.AsSpan().IndexOfAny("=, ") >= 0)
            throw new ArgumentException($"A setting's name is one word without '=', ',' or spaces (was '{name}').", nameof(name));
        Name = name;
        Requirement = requirement;
    }

    /// <summary>Its name in the item's Settings.</summary>
    public string Name { get; }

    /// <summary>What a value must be, as the error for one that is not says it (e.g. "a whole number of seconds above 0").</summary>
    public string Requirement { get; }

    /// <summary>Reads a value as the item gives it (invariant culture); false when it is not one the setting takes.</summary>
    public abstract bool TryRead(string text, out object? value);
}

/// <summary>A setting whose value is a <typeparamref name="T"/>, its <see cref="Default"/> when the item does not give it.</summary>
/// <param name="name">Its name in the item's Settings.</param>
/// <param name="defaultValue">Its value when the item does not give it.</param>
/// <param name="requirement">What a value must be, for the error that refuses one.</param>
/// <param name="accepts">Which parsed values it takes (all when null).</param>
public sealed class TransportSetting<T>(string name, T defaultValue, string requirement, Func<T, bool>? accepts = null)
    : TransportSetting(name, requirement) where T : IParsable<T>
{
    /// <summary>Its value when the item does not give it.</summary>
    public T Default { get; } = defaultValue;

    public override bool TryRead(string text, out object? value)
    {
        if (T.TryParse(text, CultureInfo.InvariantCulture, out var parsed) && (accepts is null || accepts(parsed)))
        {
            value = parsed;
            return true;
        }
        value = null;
        return false;
    }
}
