using System.Collections.Concurrent;
using System.Reflection;
using System.Runtime.Loader;

namespace IntegrationTasks.Transfer;

/// <summary>
/// Transports written outside the suite (an <c>ExternalTransport</c> item): their assembly loaded in a context of its own that shares
/// the seam (IntegrationTasks.Abstractions) with the suite, so that their <see cref="Transport"/> is the suite's, and resolves their
/// own dependencies from their folder (their .deps.json). The assembly is read into memory, not mapped from its file: rebuilding it
/// while a reused MSBuild node has it loaded neither fails nor leaves the node on the old code, which is keyed by the file's time.
/// </summary>
internal static class ExternalTransports
{
    private static readonly ConcurrentDictionary<(string Path, DateTime Written, long Length), Lazy<IReadOnlyList<Transport>>> Loaded = new();

    /// <summary>The transport named so in that assembly, or IT1001 saying what is there instead.</summary>
    public static Transport Find(string assemblyPath, string name)
    {
        var transports = In(assemblyPath);
        var named = transports.Where(t => string.Equals(t.Name, name, StringComparison.Ordinal)).ToList();
        return named.Count switch
        {
            1 => named[0],
            0 => throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{Path.GetFileName(assemblyPath)} has no transport named '{name}' (it has: {(transports.Count == 0 ? "none" : string.Join(", ", transports.Select(t => t.Name)))}): a Transport's Name must be its ExternalTransport item's."),
            _ => throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{Path.GetFileName(assemblyPath)} has {named.Count} transports named '{name}' ({string.Join(", ", named.Select(t => t.GetType().FullName))}): each needs a name of its own."),
        };
    }

    /// <summary>Every transport the assembly declares: its public, non-abstract <see cref="Transport"/> subclasses.</summary>
    public static IReadOnlyList<Transport> In(string assemblyPath)
    {
        var path = Path.GetFullPath(assemblyPath);
        var file = new FileInfo(path);
        if (!file.Exists)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"The transport assembly {path} does not exist: build its project first (an ExternalTransport with a Project is built by RunAll and BuildTasks).");
        try
        {
            return Loaded.GetOrAdd((path, file.LastWriteTimeUtc, file.Length), key => new(() => Declared(Load(key.Path)))).Value;
        }
        catch (Exception e) when (e is BadImageFormatException or FileLoadException or FileNotFoundException or ReflectionTypeLoadException or TypeLoadException
                                      or TargetInvocationException or MissingMethodException)
        {
            Loaded.TryRemove((path, file.LastWriteTimeUtc, file.Length), out _);
            throw new IntegrationException(ErrorCodes.InvalidParameter, $"Cannot load the transports of {path}: {(e.InnerException ?? e).Message}", e);
        }
    }

    private static Assembly Load(string path)
    {
        var assembly = new TransportLoadContext(path).LoadMain();
        // Compiled against a newer seam than the suite's, it would fail later, on the first member the suite's copy lacks.
        var seam = typeof(Transport).Assembly.GetName();
        if (assembly.GetReferencedAssemblies().FirstOrDefault(r => r.Name == seam.Name) is { Version: { } wanted } && seam.Version is { } have && wanted > have)
            throw new IntegrationException(ErrorCodes.InvalidParameter,
                $"{Path.GetFileName(path)} was built against {seam.Name} {wanted}, newer than this suite's {have}: use an IntegrationTasks.Sdk at least as new.");
        return assembly;
    }

    private static IReadOnlyList<Transport> Declared(Assembly assembly) =>
    [
        .. assembly.GetExportedTypes()
            .Where(t => t is { IsClass: true, IsAbstract: false } && typeof(Transport).IsAssignableFrom(t) && t.GetConstructor(Type.EmptyTypes) is not null)
            .OrderBy(t => t.FullName, StringComparer.Ordinal)
            .Select(t => (Transport)Activator.CreateInstance(t)!),
    ];

    private sealed class TransportLoadContext(string path) : AssemblyLoadContext($"IntegrationTasks transport {Path.GetFileName(path)}")
    {
        private readonly AssemblyDependencyResolver _resolver = new(path);

        /// <summary>The seam is the suite's own copy (one <see cref="Transport"/> type for both); the rest from the transport's folder.</summary>
        private static readonly Assembly Seam = typeof(Transport).Assembly;

        public Assembly LoadMain()
        {
            using var image = new MemoryStream(File.ReadAllBytes(path));
            var symbols = Path.ChangeExtension(path, ".pdb");
            using var pdb = File.Exists(symbols) ? new MemoryStream(File.ReadAllBytes(symbols)) : null;
            return LoadFromStream(image, pdb);
        }

        protected override Assembly? Load(AssemblyName assemblyName)
        {
            if (AssemblyName.ReferenceMatchesDefinition(assemblyName, Seam.GetName()) || assemblyName.Name == Seam.GetName().Name)
                return Seam;
            return _resolver.ResolveAssemblyToPath(assemblyName) is { } dependency ? LoadFromAssemblyPath(dependency) : null;
        }

        protected override IntPtr LoadUnmanagedDll(string unmanagedDllName) =>
            _resolver.ResolveUnmanagedDllToPath(unmanagedDllName) is { } library ? LoadUnmanagedDllFromPath(library) : IntPtr.Zero;
    }
}
