// Tests share databases and start processes; they run one at a time.
[assembly: Microsoft.VisualStudio.TestTools.UnitTesting.DoNotParallelize]
