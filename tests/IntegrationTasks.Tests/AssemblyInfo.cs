// Unit tests (TestCategory "Unit") run in parallel, class by class. End-to-end tests share the suite's PostgreSQL
// cluster and broker, and start processes and servers: they are marked [DoNotParallelize] and run one at a time.
[assembly: Microsoft.VisualStudio.TestTools.UnitTesting.Parallelize(Scope = Microsoft.VisualStudio.TestTools.UnitTesting.ExecutionScope.ClassLevel)]
