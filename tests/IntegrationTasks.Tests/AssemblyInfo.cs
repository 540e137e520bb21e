// Test classes run three at a time (much of an end-to-end test waits on processes, so three keep two cores busy), each class's tests in order. Every test build gets ports of its own (TestBuild) and artifacts of
// its own. Classes marked [DoNotParallelize] run alone after the others: those that share the suite's broker queues
// (ManyClientsTests), assert process-wide counts (the thread pool's reservations, open connections) or hold a client to timeouts
// of a second or two that a busy core could miss (Tcp, Http, Wcf, the relay, server stats).
[assembly: Microsoft.VisualStudio.TestTools.UnitTesting.Parallelize(Workers = 3, Scope = Microsoft.VisualStudio.TestTools.UnitTesting.ExecutionScope.ClassLevel)]
