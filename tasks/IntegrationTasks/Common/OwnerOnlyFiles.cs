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
