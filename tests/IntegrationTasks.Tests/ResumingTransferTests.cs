namespace IntegrationTasks.Tests;

/// <summary>
/// The one resume loop of every stream transport, driven directly: attempts that commit some batches and then break, the way
/// a transport's attempt does. No network, no database: each case is deterministic and takes milliseconds.
/// </summary>
[TestClass]
[TestCategory("Unit")]
public sealed class ResumingTransferTests
{
    private static ResumingTransfer Loop(int batches, bool resumes = true, int maxReconnects = 10, CapturingLog? log = null) =>
        new(BatchPlan.Create(batches, 10), log ?? new CapturingLog()) { Resumes = resumes, MaxReconnects = maxReconnects, FirstBackoff = TimeSpan.Zero };

    private static IntegrationException Break() => new(ErrorCodes.ConnectionLost, "reset by peer");

    [TestMethod]
    public async Task A_break_after_each_batch_is_resumed_asking_only_for_the_batches_not_committed()
    {
        var log = new CapturingLog();
        var loop = Loop(4, log: log);
        var asked = new List<int[]>();
        await loop.RunAsync((missing, _) =>
        {
            asked.Add([.. missing]);
            loop.MarkConnected();
            loop.Committed.Add(missing[0]); // one batch committed, then the connection breaks (but after the last)
            return missing.Count > 1 ? Task.FromException(Break()) : Task.CompletedTask;
        }, CancellationToken.None);
        Assert.AreEqual("0,1,2,3 | 1,2,3 | 2,3 | 3", string.Join(" | ", asked.Select(a => string.Join(",", a))));
        Assert.AreEqual(3, loop.Reconnects);
        Assert.IsEmpty(loop.Committed.Missing());
        Assert.AreEqual(3, log.Lines.Count(l => l.StartsWith("warning IT3006: The connection to the server broke with", StringComparison.Ordinal)));
    }

    [TestMethod]
    public async Task A_break_mid_batch_asks_again_for_that_batch_and_never_for_one_committed()
    {
        // Batch 1's frame was cut half-way: it was not committed, so it is asked for again; batch 0 never is.
        var loop = Loop(3);
        var asked = new List<int[]>();
        await loop.RunAsync((missing, _) =>
        {
            asked.Add([.. missing]);
            loop.MarkConnected();
            if (asked.Count == 1)
            {
                loop.Committed.Add(0);
                return Task.FromException(new IntegrationException(ErrorCodes.ConnectionLost, "cut mid-frame in batch 1"));
            }
            foreach (var batch in missing)
                loop.Committed.Add(batch);
            return Task.CompletedTask;
        }, CancellationToken.None);
        Assert.AreEqual("0,1,2 | 1,2", string.Join(" | ", asked.Select(a => string.Join(",", a))));
    }

    [TestMethod]
    public async Task A_duplicate_commit_of_a_batch_changes_nothing()
    {
        var loop = Loop(2);
        await loop.RunAsync((missing, _) =>
        {
            loop.MarkConnected();
            loop.Committed.Add(0);
            loop.Committed.Add(0); // an answer delivered twice (a redelivered queue message)
            loop.Committed.Add(1);
            return Task.CompletedTask;
        }, CancellationToken.None);
        Assert.AreEqual(0, loop.Reconnects);
        Assert.AreEqual(TimeSpan.Zero, loop.Committed.RecoveryTime, "no break, no recovery time");
    }

    [TestMethod]
    public async Task A_failure_before_the_first_connection_is_no_server_and_is_not_resumed()
    {
        var loop = Loop(2);
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() =>
            loop.RunAsync((_, _) => Task.FromException(new IntegrationException(ErrorCodes.ConnectionFailed, "refused")), CancellationToken.None));
        Assert.AreEqual(ErrorCodes.ConnectionFailed, e.Code);
        Assert.AreEqual(0, loop.Reconnects);
    }

    [TestMethod]
    public async Task A_transport_that_does_not_resume_fails_at_the_first_break_with_IT3006_naming_what_is_left()
    {
        var loop = Loop(5, resumes: false);
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => loop.RunAsync((missing, _) =>
        {
            loop.MarkConnected();
            loop.Committed.Add(missing[0]);
            loop.Committed.Add(missing[1]);
            return Task.FromException(Break());
        }, CancellationToken.None));
        Assert.AreEqual(ErrorCodes.ConnectionLost, e.Code);
        StringAssert.Contains(e.Message, "3 of 5 batches not committed");
        StringAssert.Contains(e.Message, "reset by peer");
        Assert.AreEqual(0, loop.Reconnects);
    }

    [TestMethod]
    public async Task Giving_up_after_MaxReconnects_says_so()
    {
        var loop = Loop(3, maxReconnects: 2);
        var attempts = 0;
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => loop.RunAsync((_, _) =>
        {
            attempts++;
            loop.MarkConnected();
            return Task.FromException(Break());
        }, CancellationToken.None));
        Assert.AreEqual(3, attempts, "the first attempt and two reconnections");
        StringAssert.Contains(e.Message, "(gave up after 2 reconnections; see MaxReconnects)");
    }

    [TestMethod]
    public async Task A_failure_that_is_not_a_break_is_not_resumed()
    {
        var loop = Loop(3);
        var e = await Assert.ThrowsExactlyAsync<IntegrationException>(() => loop.RunAsync((_, _) =>
        {
            loop.MarkConnected();
            return Task.FromException(new IntegrationException(ErrorCodes.MalformedXml, "an unknown batch in the answer"));
        }, CancellationToken.None));
        Assert.AreEqual(ErrorCodes.MalformedXml, e.Code);
        Assert.AreEqual(0, loop.Reconnects);
    }

    [TestMethod]
    public async Task A_cancelled_transfer_is_not_resumed()
    {
        var loop = Loop(3);
        using var cancel = new CancellationTokenSource();
        await Assert.ThrowsAsync<OperationCanceledException>(() => loop.RunAsync(async (_, token) =>
        {
            loop.MarkConnected();
            await cancel.CancelAsync();
            token.ThrowIfCancellationRequested();
        }, cancel.Token));
        Assert.AreEqual(0, loop.Reconnects);
    }
}
