using IntegrationTasks.Http;

namespace IntegrationTasks.Tests;

internal static class RunningHttpServer
{
    public static string HostAssembly => RunningHostModule.HostAssembly;

    public static Task<RunningHostModule> StartAsync(TestDatabases databases, long maxRequestBytes = SettingDefaults.MaxRequestBytes) =>
        RunningHostModule.StartAsync(new HttpServer { MaxRequestBytes = maxRequestBytes }, databases, HttpRecordsProtocol.Path);
}
