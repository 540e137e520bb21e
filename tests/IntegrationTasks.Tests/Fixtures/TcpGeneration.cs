using IntegrationTasks.Streams;

namespace IntegrationTasks.Tests;

/// <summary>The series' TCP generations as the tests drive them: a server model, a frame format, an I/O style and a client task.</summary>
public sealed record TcpGeneration(string Name, Func<ServerModel> ServerModel, FrameFormat Format, StreamIo Io, Func<TcpClientTask> NewClient)
{
    public static readonly IReadOnlyDictionary<string, TcpGeneration> All = new[]
    {
        new TcpGeneration("TcpClientSingleThreadTest", () => new LockStepServerModel(), FrameFormat.Plain, StreamIo.Streams, () => new TcpClientSingleThreadTest()),
        new TcpGeneration("TcpClientMultiThreadTest", () => new LockStepServerModel(), FrameFormat.Plain, StreamIo.Streams, () => new TcpClientMultiThreadTest()),
        new TcpGeneration("TcpClient2", () => new PipelinedServerModel(1, 8), FrameFormat.Plain, StreamIo.Streams, () => new TcpClient2()),
        new TcpGeneration("TcpClientMultiThreadTest3", () => new PipelinedServerModel(4, 8), FrameFormat.Tagged, StreamIo.Streams, () => new TcpClientMultiThreadTest3()),
        new TcpGeneration("TcpClientMultiThreadTest4", () => new PipelinedServerModel(1, 8), FrameFormat.Plain, StreamIo.Pipelines, () => new TcpClientMultiThreadTest4()),
    }.ToDictionary(g => g.Name);

    public static IEnumerable<object[]> Names => All.Keys.Select(name => new object[] { name });

    /// <summary>One generation's server each (the multi-thread client shares TCP 1's server).</summary>
    public static IEnumerable<string> ServerNames => ["TcpClientSingleThreadTest", "TcpClient2", "TcpClientMultiThreadTest3", "TcpClientMultiThreadTest4"];

    public override string ToString() => Name;
}
