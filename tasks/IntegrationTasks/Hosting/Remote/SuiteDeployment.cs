using System.Formats.Tar;
using System.Globalization;
using System.IO.Compression;
using System.Security.Cryptography;
using System.Text;

namespace IntegrationTasks.Hosting.Remote;

/// <summary>
/// The suite as another machine runs it: build.proj, the targets, the built tasks and host — no sources, nothing built there.
/// Its version is a digest of those files, so a machine keeps one folder per version (<c>suite-VERSION</c> under the deployment
/// folder) and an unchanged suite is not sent twice. Native libraries are sent for Linux only (the machines the suite drives).
/// </summary>
public sealed class SuiteDeployment
{
    private SuiteDeployment(string root, IReadOnlyList<string> files, string version)
    {
        Root = root;
        Entries = files;
        Version = version;
    }

    /// <summary>The checkout (or package folder) the files come from.</summary>
    public string Root { get; }

    /// <summary>The files sent, relative to <see cref="Root"/> with '/' separators, in order.</summary>
    public IReadOnlyList<string> Entries { get; }

    /// <summary>The first 16 hex digits of the files' SHA-256 digest (names and contents).</summary>
    public string Version { get; }

    /// <summary>Where a machine keeps its copies, relative to the user's home (ssh starts there) unless absolute.</summary>
    public const string DefaultFolder = ".cache/integrationtasks";

    /// <summary>The suite under <paramref name="root"/> as built in <paramref name="configuration"/>; IT4008 when it was not built.</summary>
    public static SuiteDeployment Of(string root, string configuration)
    {
        root = Path.GetFullPath(root);
        string[] builds = [$"tasks/IntegrationTasks/bin/{configuration}/net10.0", $"tasks/IntegrationTasks.Host/bin/{configuration}/net10.0"];
        foreach (var (build, assembly) in builds.Zip(["IntegrationTasks.dll", "IntegrationTasks.Host.dll"]).Where(b => !File.Exists(Path.Combine(root, b.First, b.Second))))
            throw new IntegrationException(ErrorCodes.ProgramNotFound, $"The suite is not built ({assembly} is not in {Path.Combine(root, build)}): run dotnet msbuild build.proj -t:BuildTasks first.");
        // build.proj with what it reads beside it: the SDK pin, MSBuild's switches (no node reuse) and the suite's version.
        var files = new List<string> { "build.proj", "global.json", "Directory.Build.rsp", "version.props" };
        files.AddRange(Below(root, "targets", _ => true));
        foreach (var build in builds)
            files.AddRange(Below(root, build, SentToLinux));
        files = [.. files.Where(f => File.Exists(Path.Combine(root, f))).Distinct().Order(StringComparer.Ordinal)];
        using var digest = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        foreach (var file in files)
        {
            digest.AppendData(Encoding.UTF8.GetBytes(file + "\n"));
            digest.AppendData(File.ReadAllBytes(Path.Combine(root, file)));
        }
        return new SuiteDeployment(root, files, Convert.ToHexStringLower(digest.GetHashAndReset())[..16]);
    }

    private static IEnumerable<string> Below(string root, string folder, Func<string, bool> keep) =>
        Directory.Exists(Path.Combine(root, folder))
            ? Directory.EnumerateFiles(Path.Combine(root, folder), "*", SearchOption.AllDirectories)
                .Select(f => Path.GetRelativePath(root, f).Replace('\\', '/')).Where(keep)
            : [];

    /// <summary>Everything but other systems' native libraries (runtimes/win-x64/…, runtimes/osx-arm64/…, browser-wasm).</summary>
    private static bool SentToLinux(string file)
    {
        var at = file.IndexOf("/runtimes/", StringComparison.Ordinal);
        if (at < 0)
            return true;
        var runtime = file[(at + "/runtimes/".Length)..].Split('/')[0];
        return runtime is "unix" || runtime.StartsWith("linux-", StringComparison.Ordinal);
    }

    /// <summary>The folder of this version on a machine, under <paramref name="folder"/>.</summary>
    public string FolderOn(string folder) => $"{folder.TrimEnd('/')}/suite-{Version}";

    /// <summary>
    /// This version on <paramref name="machine"/>: left as it is when a complete copy is there, else sent (a gzipped tar over the ssh
    /// session, unpacked beside and moved into place, so a copy cut short is never taken for complete). Owner-only. Returns the
    /// folder's absolute path there and whether it was sent.
    /// </summary>
    public async Task<(string Folder, bool Sent)> EnsureOnAsync(SshMachine machine, string folder, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var target = FolderOn(folder);
        var quoted = SshMachine.Quote(target);
        var present = await machine.RunAsync(["sh", "-c", $"test -f {quoted}/.complete && cd {quoted} && pwd"], timeout, cancellationToken).ConfigureAwait(false);
        if (present.ExitCode == 0)
            return (present.Output.Trim(), false);
        var parent = SshMachine.Quote(folder);
        var script = $"set -e; umask 077; mkdir -p {parent}; rm -rf {quoted}.partial; mkdir {quoted}.partial; tar --no-same-owner --no-same-permissions -xzf - -C {quoted}.partial; "
                     + $"touch {quoted}.partial/.complete; rm -rf {quoted}; mv {quoted}.partial {quoted}; cd {quoted} && pwd";
        var sent = await machine.RunAsync(["sh", "-c", script], timeout, cancellationToken, WriteArchiveAsync).ConfigureAwait(false);
        if (sent.ExitCode != 0)
            throw new IntegrationException(ErrorCodes.RemotePrerequisiteMissing,
                $"Could not place the suite in {target} on {machine.Destination} (exit {sent.ExitCode}): {sent.Errors.Trim()}");
        return (sent.Output.Trim(), true);
    }

    /// <summary>The files as a gzipped tar, written as they are read: memory stays bounded whatever the suite's size.</summary>
    private async Task WriteArchiveAsync(Stream destination, CancellationToken cancellationToken)
    {
        await using var gzip = new GZipStream(destination, CompressionLevel.Fastest, leaveOpen: true);
        await using (var tar = new TarWriter(gzip, TarEntryFormat.Pax, leaveOpen: true))
        {
            foreach (var file in Entries)
                await tar.WriteEntryAsync(Path.Combine(Root, file), file, cancellationToken).ConfigureAwait(false);
        }
        await gzip.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"suite {Version} ({Entries.Count} files)");
}
