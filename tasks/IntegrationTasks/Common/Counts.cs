using System.Globalization;

namespace IntegrationTasks.Common;

/// <summary>Lists of counts as MSBuild properties give them ("1000+20000", or items): positive whole numbers, invariant.</summary>
public static class Counts
{
    /// <summary>Every count in <paramref name="items"/> (each split at '+'), or IT1001 naming <paramref name="name"/> for one that is not a positive whole number.</summary>
    public static List<int> Parse(IEnumerable<string> items, string name) =>
        items.SelectMany(c => c.Split('+')).Select(c => c.Trim()).Where(c => c.Length > 0)
            .Select(text => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var count) && count >= 1 ? count
                : throw new IntegrationException(ErrorCodes.InvalidParameter, $"{name} holds '{text}', which is not a positive whole number."))
            .ToList();
}
