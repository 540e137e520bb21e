using BenchmarkDotNet.Running;

// `dotnet run -c Release -- --filter * --job short --exporters json --artifacts <dir>`: the AsyncOverhead target does this.
BenchmarkSwitcher.FromAssembly(typeof(IntegrationTasks.AsyncOverhead.PriceBenchmarks).Assembly).Run(args);
