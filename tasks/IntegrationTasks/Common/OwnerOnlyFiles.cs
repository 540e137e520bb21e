namespace IntegrationTasks.Common;

/// <summary>Files only their owner may read (keys, passwords) in a folder only its owner may enter.</summary>
public static class OwnerOnlyFiles
{
    public static void CreateDirectory(string folder)
    {
        if (OperatingSystem.IsWindows())
            Directory.CreateDirectory(folder);
        else
        {
            Directory.CreateDirectory(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            File.SetUnixFileMode(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
    }

    /// <summary>
    /// A folder made for the suite's own data, only its owner may enter: made so when missing (with any parents it needs), left as
    /// it is when it exists (a folder of the user's is theirs to set).
    /// </summary>
    public static void CreateDirectoryIfMissing(string folder)
    {
        if (Directory.Exists(folder))
            return;
        if (OperatingSystem.IsWindows())
            Directory.CreateDirectory(folder);
        else
            Directory.CreateDirectory(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
    }

    /// <summary>An empty file only its owner may read, made when missing (an existing one is left as it is).</summary>
    public static void CreateFileIfMissing(string path)
    {
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        try
        {
            using var created = new FileStream(path, options);
        }
        catch (IOException) when (File.Exists(path))
        {
            // made meanwhile, or there already: left as it is
        }
    }

    /// <summary>Written to a new file that only its owner can read, then moved over the old one: never readable by others, even briefly.</summary>
    public static void Write(string path, string text)
    {
        var temporary = path + ".new";
        File.Delete(temporary); // made anew below, so its mode is the one given and no file planted there is written through
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        using (var stream = new FileStream(temporary, options))
        using (var writer = new StreamWriter(stream))
            writer.Write(text);
        File.Move(temporary, path, overwrite: true);
    }
}
