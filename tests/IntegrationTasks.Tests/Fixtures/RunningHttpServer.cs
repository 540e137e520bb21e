using IntegrationTasks.Http;

namespace IntegrationTasks.Tests;

internal static class RunningHttpServer
{
    public static string HostAssembly => RunningHostModule.HostAssembly;

    public static Task<RunningHostModule> StartAsync(TestDatabases databases, long maxRequestBytes = HttpRecordsProtocol.DefaultMaxRequestBytes) =>
        RunningHostModule.StartAsync(new HttpServer { MaxRequestBytes = maxRequestBytes }, databases, HttpRecordsProtocol.Path);
}
