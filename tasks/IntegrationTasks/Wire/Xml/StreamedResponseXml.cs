using System.Buffers;
using System.Buffers.Text;

namespace IntegrationTasks.Wire;

/// <summary>
/// Reads a response as it comes off a connection (a frame's payload, its length known), so no frame is held whole: records are
/// read in place, by <see cref="CanonicalResponseXml"/>, from a window of the stream that grows only as far as the pooled sizes,
/// and a larger record's base64 payload is decoded as it arrives. Anything outside the canonical form is left to XmlReader as
/// <see cref="RecordXml.ReadResponse"/> leaves it: the rest of the message is read and put back together byte for byte (the
/// records already read as a table's start, a payload already decoded as the base64 it came as), so every form is judged, and every
/// error coded, as before; an error's line and position count from the first record not read in place. A text payload larger than
/// the pooled window is still held whole, as its string must be.
/// </summary>
internal sealed class StreamedResponseXml : IDisposable
{
    private const int FirstWindow = 64 * 1024;

    /// <summary>Base64's characters (no padding): what a payload's text is made of until its last four.</summary>
    private static readonly SearchValues<byte> Base64Characters =
        SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"u8);

    private readonly Stream _input;
    private readonly long _length;
    private long _unread;
    private byte[] _window;
    private int _start;
    private int _end;

    private StreamedResponseXml(Stream input, long length)
    {
        _input = input;
        _length = _unread = length;
        _window = Buffers.Rent((int)Math.Min(FirstWindow, Math.Max(length, 1)));
    }

    /// <summary>The largest window the read needed (the window only grows): at most the pooled 1 MiB, whatever a bytes payload's size.</summary>
    internal int WindowBytes => _window.Length;

    /// <summary>Whether the read left part of the message to XmlReader.</summary>
    internal bool FellBack { get; private set; }

    /// <summary>Reads the whole response from <paramref name="payload"/>, a stream that ends where the message ends.</summary>
    public static async Task<List<ServiceRecord>> ReadAsync(Stream payload, CancellationToken cancellationToken)
    {
        using var reader = new StreamedResponseXml(payload, payload.Length);
        return await reader.ReadAllAsync(cancellationToken).ConfigureAwait(false);
    }

    internal static async Task<(List<ServiceRecord> Records, int WindowBytes, bool FellBack)> ReadMeasuredAsync(Stream payload, CancellationToken cancellationToken)
    {
        using var reader = new StreamedResponseXml(payload, payload.Length);
        var records = await reader.ReadAllAsync(cancellationToken).ConfigureAwait(false);
        return (records, reader.WindowBytes, reader.FellBack);
    }

    private ReadOnlySpan<byte> Available => _window.AsSpan(_start, _end - _start);

    private async Task<List<ServiceRecord>> ReadAllAsync(CancellationToken cancellationToken)
    {
        var records = new List<ServiceRecord>();
        var root = CanonicalResponseXml.Declaration.Length + Math.Max(TableStart.Length, CanonicalResponseXml.EmptyTable.Length);
        while (_end - _start < root && _unread > 0)
            await FillAsync(cancellationToken).ConfigureAwait(false);
        var skipped = Available.StartsWith(CanonicalResponseXml.Declaration) ? CanonicalResponseXml.Declaration.Length : 0;
        if (_unread == 0 && Available[skipped..].SequenceEqual(CanonicalResponseXml.EmptyTable))
            return records;
        if (!Available[skipped..].StartsWith(TableStart))
            return await ReadRestWithXmlReaderAsync(records, [], cancellationToken).ConfigureAwait(false);
        _start += skipped + TableStart.Length;

        var searched = 0; // how much of the record so far holds no end tag
        while (true)
        {
            var available = Available;
            if (_unread == 0 && available.SequenceEqual(TableEnd))
                return records;
            var from = Math.Max(0, searched - CanonicalResponseXml.RecordEnd.Length + 1);
            var close = available[from..].IndexOf(CanonicalResponseXml.RecordEnd);
            if (close >= 0)
            {
                var record = available[..(from + close + CanonicalResponseXml.RecordEnd.Length)];
                var rest = record;
                if (!CanonicalResponseXml.TryRecord(ref rest, out var read) || !rest.IsEmpty)
                    return await ReadRestWithXmlReaderAsync(records, TableStart.ToArray(), cancellationToken).ConfigureAwait(false);
                records.Add(read);
                _start += record.Length;
                searched = 0;
                continue;
            }
            searched = available.Length;
            if (_unread == 0)
                return await ReadRestWithXmlReaderAsync(records, TableStart.ToArray(), cancellationToken).ConfigureAwait(false);
            if (_start == 0 && _end == _window.Length && _window.Length >= Buffers.MaxPooledBytes
                && available.IndexOf(CanonicalResponseXml.PayloadStart) is var payloadAt and >= 0)
            {
                if (await ReadLargePayloadRecordAsync(payloadAt, cancellationToken).ConfigureAwait(false) is not { } large)
                    return await ReadRestWithXmlReaderAsync(records, TableStart.ToArray(), cancellationToken).ConfigureAwait(false);
                if (large.Fallback is { } prefix)
                    return await ReadRestWithXmlReaderAsync(records, prefix, cancellationToken).ConfigureAwait(false);
                records.Add(large.Record!);
                searched = 0;
                continue;
            }
            await FillAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    private static ReadOnlySpan<byte> TableStart => "<table>"u8;
    private static ReadOnlySpan<byte> TableEnd => "</table>"u8;

    /// <summary>
    /// A record larger than the window whose payload is base64: its fields are read in place, its payload decoded from the window as
    /// it refills. Null when the fields are not canonical (nothing consumed); a fallback prefix when the payload turns out not to be
    /// (the bytes consumed so far, re-made exactly: whole base64 quartets without padding decode one to one).
    /// </summary>
    private async Task<(ServiceRecord? Record, byte[]? Fallback)?> ReadLargePayloadRecordAsync(int payloadAt, CancellationToken cancellationToken)
    {
        var fields = Available[..payloadAt];
        if (!CanonicalResponseXml.TryHead(ref fields, out var head) || !fields.IsEmpty)
            return null;
        var headBytes = Available[..(payloadAt + CanonicalResponseXml.PayloadStart.Length)].ToArray();
        _start += headBytes.Length;
        using var decoded = new DecodedPayload();
        while (true)
        {
            var text = Available;
            var stop = text.IndexOfAnyExcept(Base64Characters);
            var run = stop < 0 ? text : text[..stop];
            var quartets = run.Length / 4 * 4;
            var taken = decoded.DecodeQuartets(run[..quartets]);
            _start += taken;
            if (taken != quartets)
                return (null, Fallback(headBytes, decoded));
            if (stop >= 0)
                break;
            if (_unread == 0)
                return (null, Fallback(headBytes, decoded));
            await FillAsync(cancellationToken).ConfigureAwait(false);
        }

        // The last quartet (with its padding) and the end tags.
        var closing = CanonicalResponseXml.PayloadEnd.Length + CanonicalResponseXml.RecordEnd.Length;
        while (_end - _start < 4 + closing && _unread > 0)
            await FillAsync(cancellationToken).ConfigureAwait(false);
        var tail = Available;
        var lessThan = tail.IndexOf((byte)'<');
        // The end tags are checked first: a quartet decoded is a quartet the fallback would have to give back.
        if (lessThan is not (0 or 4)
            || !tail[lessThan..].StartsWith(CanonicalResponseXml.PayloadEnd)
            || !tail[(lessThan + CanonicalResponseXml.PayloadEnd.Length)..].StartsWith(CanonicalResponseXml.RecordEnd)
            || !decoded.DecodeLast(tail[..lessThan]))
            return (null, Fallback(headBytes, decoded));
        _start += lessThan + closing;
        return (head.ToRecord(decoded.ToArray(), null), null);
    }

    private static byte[] Fallback(byte[] headBytes, DecodedPayload decoded)
    {
        using var prefix = new MemoryStream();
        prefix.Write(TableStart);
        prefix.Write(headBytes);
        decoded.WriteBase64(prefix);
        return prefix.ToArray();
    }

    /// <summary>
    /// The message from where the in-place reading stopped, read whole and given to <see cref="RecordXml.ReadResponse"/> behind
    /// <paramref name="prefix"/> (what was consumed of the unfinished part: nothing at the root, else a table's start).
    /// </summary>
    private async Task<List<ServiceRecord>> ReadRestWithXmlReaderAsync(List<ServiceRecord> records, byte[] prefix, CancellationToken cancellationToken)
    {
        FellBack = true;
        var rest = new MemoryStream(checked((int)(prefix.Length + (_end - _start) + _unread)));
        rest.Write(prefix);
        rest.Write(Available);
        while (_unread > 0)
        {
            _start = _end = 0;
            await FillAsync(cancellationToken).ConfigureAwait(false);
            rest.Write(Available);
        }
        rest.Position = 0;
        records.AddRange(RecordXml.ReadResponse(rest, cancellationToken));
        return records;
    }

    /// <summary>Reads more of the message after what is held, moving it to the window's front first and doubling the window when full.</summary>
    private async Task FillAsync(CancellationToken cancellationToken)
    {
        if (_start > 0)
        {
            Available.CopyTo(_window);
            _end -= _start;
            _start = 0;
        }
        if (_end == _window.Length)
        {
            // Doubling while pooled; past that (a text payload or a field larger than the pooled window) straight to what is left.
            var larger = Buffers.Rent((int)(_window.Length >= Buffers.MaxPooledBytes ? _end + _unread : Math.Min((long)_window.Length * 2, _end + _unread)));
            _window.AsSpan(0, _end).CopyTo(larger);
            Buffers.Return(_window);
            _window = larger;
        }
        var read = await _input.ReadAsync(_window.AsMemory(_end, (int)Math.Min(_window.Length - _end, _unread)), cancellationToken).ConfigureAwait(false);
        if (read == 0)
            throw FrameCodec.TruncatedPayload(_length - _unread, (int)_length);
        _end += read;
        _unread -= read;
    }

    public void Dispose() => Buffers.Return(_window);

    /// <summary>A payload's bytes as they are decoded, in pooled blocks (each used to its last whole triplet), made one exact array at its end.</summary>
    private sealed class DecodedPayload : IDisposable
    {
        private const int BlockBytes = 64 * 1024;
        private readonly List<(byte[] Array, int Length)> _blocks = [];
        private int _length;

        /// <summary>Room left in the last block, in whole triplets (what whole quartets of text decode into); a new block when none.</summary>
        private Span<byte> Room()
        {
            if (_blocks.Count == 0 || _blocks[^1].Array.Length / 3 * 3 - _blocks[^1].Length < 3)
                _blocks.Add((ArrayPool<byte>.Shared.Rent(BlockBytes), 0));
            var (array, length) = _blocks[^1];
            return array.AsSpan(length, array.Length / 3 * 3 - length);
        }

        private void Wrote(int bytes)
        {
            _blocks[^1] = (_blocks[^1].Array, _blocks[^1].Length + bytes);
            _length += bytes;
        }

        /// <summary>Whole quartets of base64's characters (no padding), decoded; the characters taken (all of them: such text always decodes).</summary>
        public int DecodeQuartets(ReadOnlySpan<byte> text)
        {
            var taken = 0;
            while (taken < text.Length)
            {
                var room = Room();
                var take = Math.Min(text.Length - taken, room.Length / 3 * 4);
                Base64.DecodeFromUtf8(text.Slice(taken, take), room, out var consumed, out var written, isFinalBlock: false);
                Wrote(written);
                taken += consumed;
                if (consumed != take)
                    break;
            }
            return taken;
        }

        /// <summary>The last quartet, which may end in padding (or none, when the text ended on a whole quartet).</summary>
        public bool DecodeLast(ReadOnlySpan<byte> quartet)
        {
            if (quartet.IsEmpty)
                return true;
            Span<byte> bytes = stackalloc byte[3];
            if (Base64.DecodeFromUtf8(quartet, bytes, out var consumed, out var written) != OperationStatus.Done || consumed != 4)
                return false;
            bytes[..written].CopyTo(Room());
            Wrote(written);
            return true;
        }

        public byte[] ToArray()
        {
            var bytes = GC.AllocateUninitializedArray<byte>(_length);
            var at = 0;
            foreach (var (array, length) in _blocks)
            {
                array.AsSpan(0, length).CopyTo(bytes.AsSpan(at));
                at += length;
            }
            return bytes;
        }

        /// <summary>The text these bytes were decoded from (whole quartets without padding encode back to exactly it).</summary>
        public void WriteBase64(Stream output)
        {
            var text = new byte[BlockBytes / 3 * 4 + 4];
            foreach (var (array, length) in _blocks)
            {
                Base64.EncodeToUtf8(array.AsSpan(0, length), text, out _, out var written);
                output.Write(text, 0, written);
            }
        }

        public void Dispose()
        {
            foreach (var (array, _) in _blocks)
                ArrayPool<byte>.Shared.Return(array);
        }
    }
}
