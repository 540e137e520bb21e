using System.Text;

namespace IntegrationTasks.Data;

/// <summary>What a row's payload holds: bytes, or UTF-8 text with what XML and JSON must escape.</summary>
public enum PayloadKind
{
    Bytes,
    Text,
}

/// <summary>What every row of a data set carries beside the series' fields: so many bytes of a kind (0: nothing).</summary>
public readonly record struct PayloadShape(int Bytes, PayloadKind Kind)
{
    public static readonly PayloadShape None = new(0, PayloadKind.Bytes);

    public static PayloadShape Of(int bytes, string kind) =>
        bytes < 0
            ? throw new IntegrationException(ErrorCodes.InvalidParameter, $"PayloadBytes must be at least 0 (was {bytes}).")
            : new(bytes, bytes == 0 ? PayloadKind.Bytes : PayloadKinds.Parse(kind));

    /// <summary>The shape a row carries (its stored size and kind).</summary>
    public static PayloadShape Of(ServiceRecord row) =>
        new(row.PayloadLength, row.PayloadText is null ? PayloadKind.Bytes : PayloadKind.Text);

    public override string ToString() => Bytes == 0 ? "no payload"
        : string.Create(System.Globalization.CultureInfo.InvariantCulture, $"a {Bytes:N0}-byte payload ({Kind})");
}

public static class PayloadKinds
{
    public static PayloadKind Parse(string value) =>
        Enum.TryParse<PayloadKind>(value, ignoreCase: true, out var kind) && Enum.IsDefined(kind)
            ? kind
            : throw new IntegrationException(ErrorCodes.InvalidParameter, $"Unknown PayloadKind '{value}': use Bytes or Text.");
}

/// <summary>
/// A row's payload of a given size, deterministic from (seed, id) as the rest of the row is (<see cref="SampleData"/>), so that a
/// table topped up holds what one generated in one go holds. Bytes: the first half from a seeded generator (incompressible), the
/// rest a short pattern repeated (compressible), as message benchmarks mix random and repeated bytes. Text: exactly that many
/// bytes of UTF-8 — markup characters, quotes, CR/LF, tabs and one-, two-, three- and four-byte characters — never cut inside one.
/// </summary>
public static class SamplePayload
{
    /// <summary>The share of a bytes payload that is random, the rest repeating.</summary>
    public const double RandomShare = 0.5;

    /// <summary>The text's pieces, in turn: each escaping rule of XML and JSON and each width of UTF-8.</summary>
    private static readonly byte[][] TextPieces =
    [
        .. new[] { "Payload <b class=\"x\">&amp;</b> ", "'quoted' \"double\" ", "line\r\nbreak\ttab ", "ação Ærø ", "日本語 ✓ ", "😀 ", "a\\b/c {json} " }
            .Select(Encoding.UTF8.GetBytes),
    ];

    /// <summary>The row of that ID with its payload: none at 0 bytes (the series' row), else bytes or text as the kind says.</summary>
    public static ServiceRecord Row(int id, PayloadShape shape, int seed = SampleData.DefaultSeed)
    {
        var row = SampleData.Create(id, seed);
        if (shape.Bytes == 0)
            return row;
        var payload = Create(id, shape.Bytes, shape.Kind, seed);
        return shape.Kind == PayloadKind.Text
            ? row with { PayloadText = Encoding.UTF8.GetString(payload) }
            : row with { Payload = payload };
    }

    public static byte[] Create(int id, int bytes, PayloadKind kind, int seed = SampleData.DefaultSeed)
    {
        if (bytes < 0)
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"PayloadBytes must be at least 0 (was {bytes}).");
        var payload = new byte[bytes];
        var key = (ulong)(uint)seed << 32 | (uint)id;
        if (kind == PayloadKind.Text)
            WriteText(payload, key);
        else
            WriteBytes(payload, key);
        return payload;
    }

    private static void WriteBytes(Span<byte> payload, ulong key)
    {
        var random = (int)(payload.Length * RandomShare);
        Span<byte> word = stackalloc byte[8];
        var state = key;
        for (var i = 0; i < random; i += 8)
        {
            state += 0x9E3779B97F4A7C15UL;
            BitConverter.TryWriteBytes(word, SampleData.Mix(state));
            word[..Math.Min(8, random - i)].CopyTo(payload[i..]);
        }
        // The repeating part: the row's key as text, over and over.
        var pattern = Encoding.ASCII.GetBytes($"record {key:x16} ");
        for (var i = random; i < payload.Length; i++)
            payload[i] = pattern[(i - random) % pattern.Length];
    }

    private static void WriteText(Span<byte> payload, ulong key)
    {
        var next = (int)(SampleData.Mix(key) % (ulong)TextPieces.Length);
        // The row's own start, then the pieces from a place of its own.
        var start = Encoding.ASCII.GetBytes($"#{(uint)key} ");
        var written = Math.Min(payload.Length, start.Length);
        start.AsSpan(0, written).CopyTo(payload);
        while (written < payload.Length)
        {
            var piece = TextPieces[next];
            next = (next + 1) % TextPieces.Length;
            if (piece.Length <= payload.Length - written)
            {
                piece.CopyTo(payload[written..]);
                written += piece.Length;
            }
            else
            {
                // The end: ASCII only, so that no character is cut.
                payload[written..].Fill((byte)'.');
                written = payload.Length;
            }
        }
    }
}
