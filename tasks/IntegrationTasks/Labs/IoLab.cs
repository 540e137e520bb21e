using System.Diagnostics;

namespace IntegrationTasks.Labs;

/// <summary>The three ways the 2014 I/O articles run "write a file, then sort": one after the other, or overlapped.</summary>
public enum IoMode
{
    /// <summary>Write (and flush to the device), then sort: the article's 21,781 ms.</summary>
    Synchronous,

    /// <summary>Start the write as a chain of completion callbacks, sort meanwhile, then wait: the article's Begin/End, 9,111 ms.</summary>
    Callback,

    /// <summary>Start an async write, sort meanwhile, then await it: the article's async/await, 13,835 ms.</summary>
    AsyncAwait,
}

public sealed record IoLabOptions
{
    public required string Directory { get; init; }
    public int Iterations { get; init; } = 10;
    public long FileBytes { get; init; } = 100L * 1024 * 1024;
    public int SortItems { get; init; } = 10_000;
    public int ChunkBytes { get; init; } = 1024 * 1024;

    /// <summary>Leave the last written file in place (tests read it back).</summary>
    public bool KeepFiles { get; init; }
}

public sealed record IoLabResult(IoMode Mode, double TotalMilliseconds, IReadOnlyList<double> IterationMilliseconds, long BytesWritten, bool Sorted)
{
    /// <summary>The article's figure for this mode (10 iterations of 100 MB + 10,000 items, 2014 hardware).</summary>
    public double ArticleMilliseconds => Mode switch
    {
        IoMode.Synchronous => 21_781,
        IoMode.Callback => 9_111,
        _ => 13_835,
    };
}

/// <summary>
/// The 2014 I/O articles' experiment. Every write is flushed to the device (fsync through
/// <see cref="FileStream.Flush(bool)"/>), or the page cache would absorb 100 MB in a few
/// milliseconds and there would be nothing to overlap. On Linux .NET has no asynchronous file I/O
/// of the kernel's: an "async" FileStream write is a blocking pwrite run on a thread-pool thread,
/// so both overlapped modes overlap because a second thread writes while this one sorts.
/// </summary>
public sealed class IoLab(IoLabOptions options)
{
    public string PathOf(IoMode mode) => Path.Combine(options.Directory, $"iolab-{mode}.bin");

    public async Task<IoLabResult> RunAsync(IoMode mode, CancellationToken cancellationToken)
    {
        System.IO.Directory.CreateDirectory(options.Directory);
        var path = PathOf(mode);
        var chunk = Pattern(options.ChunkBytes);
        var iterations = new List<double>();
        var sorted = true;
        long written = 0;
        var total = Stopwatch.StartNew();
        for (var i = 0; i < options.Iterations; i++)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var watch = Stopwatch.StartNew();
            var items = Reversed(options.SortItems);
            switch (mode)
            {
                case IoMode.Synchronous:
                    written = WriteSynchronously(path, chunk);
                    BubbleSort(items);
                    break;
                case IoMode.Callback:
                    using (var done = new ManualResetEventSlim())
                    {
                        var callbackWrite = WriteWithCallbacks(path, chunk, done);
                        BubbleSort(items);
                        done.Wait(cancellationToken); // the article waited on its event the same way
                        written = callbackWrite.WrittenOrThrow();
                    }
                    break;
                default:
                    var asyncWrite = WriteAsync(path, chunk, cancellationToken);
                    BubbleSort(items);
                    written = await asyncWrite.ConfigureAwait(false);
                    break;
            }
            sorted &= IsAscending(items);
            iterations.Add(watch.Elapsed.TotalMilliseconds);
        }
        if (!options.KeepFiles)
            File.Delete(path);
        return new IoLabResult(mode, total.Elapsed.TotalMilliseconds, iterations, written, sorted);
    }

    private long WriteSynchronously(string path, byte[] chunk)
    {
        using var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 0, FileOptions.None);
        long written = 0;
        while (written < options.FileBytes)
        {
            var count = (int)Math.Min(chunk.Length, options.FileBytes - written);
            file.Write(chunk, 0, count);
            written += count;
        }
        file.Flush(flushToDisk: true);
        return written;
    }

    /// <summary>The article's Begin/End chain, today: each chunk's completion callback starts the next; the last one flushes and signals.</summary>
    private CallbackWrite WriteWithCallbacks(string path, byte[] chunk, ManualResetEventSlim done)
    {
        var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 0, FileOptions.Asynchronous);
        var state = new CallbackWrite(file, done);
        void WriteNext()
        {
            if (state.Written >= options.FileBytes)
            {
                state.Finish(() => file.Flush(flushToDisk: true));
                return;
            }
            var count = (int)Math.Min(chunk.Length, options.FileBytes - state.Written);
            file.WriteAsync(chunk, 0, count).ContinueWith(write =>
            {
                if (write.IsFaulted)
                {
                    state.Fail(write.Exception!.InnerException!);
                    return;
                }
                state.Written += count;
                WriteNext();
            }, TaskScheduler.Default);
        }
        WriteNext();
        return state;
    }

    private async Task<long> WriteAsync(string path, byte[] chunk, CancellationToken cancellationToken)
    {
        await using var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 0, FileOptions.Asynchronous);
        long written = 0;
        while (written < options.FileBytes)
        {
            var count = (int)Math.Min(chunk.Length, options.FileBytes - written);
            await file.WriteAsync(chunk.AsMemory(0, count), cancellationToken).ConfigureAwait(false);
            written += count;
        }
        // There is no asynchronous fsync: it blocks a thread-pool thread, as the writes did.
        await Task.Run(() => file.Flush(flushToDisk: true), cancellationToken).ConfigureAwait(false);
        return written;
    }

    /// <summary>State of one callback-chained write.</summary>
    private sealed class CallbackWrite(FileStream file, ManualResetEventSlim done)
    {
        private Exception? _failure;
        public long Written { get; set; }

        public void Finish(Action flush)
        {
            try
            {
                flush();
            }
            catch (Exception e)
            {
                _failure = e;
            }
            file.Dispose();
            done.Set();
        }

        public void Fail(Exception e)
        {
            _failure = e;
            file.Dispose();
            done.Set();
        }

        public long WrittenOrThrow() => _failure is null ? Written : throw new IOException($"The callback write failed: {_failure.Message}", _failure);
    }

    /// <summary>The article's workload: a reversed array, the worst case of bubble sort.</summary>
    public static int[] Reversed(int count) => Enumerable.Range(0, count).Reverse().ToArray();

    public static void BubbleSort(int[] items)
    {
        for (var end = items.Length - 1; end > 0; end--)
        {
            for (var i = 0; i < end; i++)
            {
                if (items[i] > items[i + 1])
                    (items[i], items[i + 1]) = (items[i + 1], items[i]);
            }
        }
    }

    public static bool IsAscending(int[] items)
    {
        for (var i = 1; i < items.Length; i++)
        {
            if (items[i - 1] > items[i])
                return false;
        }
        return true;
    }

    /// <summary>A recognisable, non-zero pattern (so a sparse or zero-filled file cannot pass for a written one).</summary>
    public static byte[] Pattern(int length)
    {
        var bytes = new byte[length];
        for (var i = 0; i < length; i++)
            bytes[i] = (byte)(i * 31 + 7);
        return bytes;
    }
}
