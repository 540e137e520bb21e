using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace IntegrationTasks.Data;

/// <summary>A data set's fingerprint: computed where ServiceTable is, the same on any machine and provider for the same rows.</summary>
public static class DataSetFingerprint
{
    /// <summary>
    /// SHA-256 over ServiceTable's rows 1..N in a canonical, culture-free form: two results files
    /// with the same fingerprint moved the same data, whatever the provider.
    /// </summary>
    public static async Task<string> OfAsync(Database database, int records, CancellationToken cancellationToken)
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        var rows = 0;
        await foreach (var row in RecordReader.ReadOrderedAsync(database, RecordTable.Service, 1, records, cancellationToken).ConfigureAwait(false))
        {
            hash.AppendData(Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture,
                $"{row.Id}\u001f{row.Desc}\u001f{BitConverter.DoubleToInt64Bits(row.Value)}\u001f{row.CreationDate.Ticks}\u001f{Nullable(row.StringField1)}\u001f{Nullable(row.StringField2)}")));
            // A payload is hashed after the row's fields; a row without one hashes as it did before there were payloads.
            if (row.Payload is not null)
                hash.AppendData([0x1f, (byte)'B', .. row.Payload]);
            if (row.PayloadText is not null)
                hash.AppendData([0x1f, (byte)'T', .. Encoding.UTF8.GetBytes(row.PayloadText)]);
            hash.AppendData([0x1e]);
            rows++;
        }
        return string.Create(CultureInfo.InvariantCulture, $"sha256:{Convert.ToHexStringLower(hash.GetHashAndReset())[..16]} over {rows:N0} rows");
    }

    private static string Nullable(string? value) => value is null ? "\u0000" : value;
}
