using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace IntegrationTasks.Generators;

/// <summary>
/// Writes, at compile time, how each transfer task of the assembly is made and how each of its parameters is set from the text a
/// transport's definition gives ("Port=8081"): a typed setter per settable property, so the seam binds without reflection and a
/// property added to a task is a parameter without being listed anywhere else.
/// </summary>
[Generator(LanguageNames.CSharp)]
public sealed class TransferTaskBinderGenerator : IIncrementalGenerator
{
    private const string ClientBase = "IntegrationTasks.Transfer.TransferClientTask";
    private const string ServerBase = "IntegrationTasks.Transfer.TransferServerTask";

    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        var tasks = context.SyntaxProvider.CreateSyntaxProvider(
                static (node, _) => node is ClassDeclarationSyntax { BaseList: not null },
                static (syntax, cancellationToken) => Describe(syntax.SemanticModel.GetDeclaredSymbol(syntax.Node, cancellationToken) as INamedTypeSymbol))
            .Where(static task => task is not null)
            .Collect();
        context.RegisterSourceOutput(tasks, static (output, described) => output.AddSource("TransferTasks.g.cs", Emit(described!)));
    }

    /// <summary>One task as "Kind|entry" (a string, so that the compiler's cache compares it by value); null for any other class.</summary>
    private static string? Describe(INamedTypeSymbol? type)
    {
        if (type is null || type.IsAbstract || type.DeclaredAccessibility != Accessibility.Public || type.IsGenericType
            || !type.InstanceConstructors.Any(c => c.Parameters.Length == 0 && c.DeclaredAccessibility == Accessibility.Public))
            return null;
        var kind = Kind(type);
        if (kind is null)
            return null;
        var name = type.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat);
        var entry = new StringBuilder();
        entry.Append("        new(\"").Append(type.Name).Append("\", static () => new ").Append(name).Append("(),\n        [\n");
        foreach (var property in Settable(type))
        {
            var convert = Conversion(property.Type);
            if (convert is null)
                continue; // not a text parameter (an item list, an engine): MSBuild's own properties and outputs
            var required = property.GetAttributes().Any(a => a.AttributeClass?.ToDisplayString() == "Microsoft.Build.Framework.RequiredAttribute");
            entry.Append("            new(\"").Append(property.Name).Append("\", ").Append(required ? "true" : "false")
                .Append(", static (task, value) => ((").Append(name).Append(")task).").Append(property.Name).Append(" = ")
                .Append(string.Format(convert, "value")).Append("),\n");
        }
        entry.Append("        ]),\n");
        return kind + "|" + entry;
    }

    private static string? Kind(INamedTypeSymbol type)
    {
        for (var t = type.BaseType; t is not null; t = t.BaseType)
            switch (t.ToDisplayString())
            {
                case ClientBase: return "Client";
                case ServerBase: return "Server";
            }
        return null;
    }

    /// <summary>The public settable instance properties of the task and its bases, the most derived first, MSBuild's own left out.</summary>
    private static IEnumerable<IPropertySymbol> Settable(INamedTypeSymbol type)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        for (var t = type; t is not null && !t.ContainingNamespace.ToDisplayString().StartsWith("Microsoft.Build", StringComparison.Ordinal); t = t.BaseType)
            foreach (var property in t.GetMembers().OfType<IPropertySymbol>())
                // The most derived declaration of a name decides, settable or not: one hidden with 'new' is never the base's.
                if (!property.IsStatic && !property.IsIndexer && seen.Add(property.Name) && property.DeclaredAccessibility == Accessibility.Public
                    && property.SetMethod is { DeclaredAccessibility: Accessibility.Public, IsInitOnly: false })
                    yield return property;
    }

    /// <summary>How a parameter's text becomes the property's value ({0} is the text); null for a type the seam does not set.</summary>
    private static string? Conversion(ITypeSymbol type) => type switch
    {
        { SpecialType: SpecialType.System_String } => "{0}",
        { SpecialType: SpecialType.System_Boolean } => "global::IntegrationTasks.Transfer.ParameterText.Boolean({0})",
        { SpecialType: SpecialType.System_Int32 } => "global::IntegrationTasks.Transfer.ParameterText.Int32({0})",
        { SpecialType: SpecialType.System_Int64 } => "global::IntegrationTasks.Transfer.ParameterText.Int64({0})",
        { SpecialType: SpecialType.System_Double } => "global::IntegrationTasks.Transfer.ParameterText.Double({0})",
        IArrayTypeSymbol { ElementType.SpecialType: SpecialType.System_String } => "global::IntegrationTasks.Transfer.ParameterText.List({0})",
        INamedTypeSymbol { TypeKind: TypeKind.Enum } e => "global::IntegrationTasks.Transfer.ParameterText.Enum<"
            + e.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat) + ">({0})",
        _ => null,
    };

    private static string Emit(IEnumerable<string> described)
    {
        var tasks = described.Distinct(StringComparer.Ordinal).OrderBy(d => d, StringComparer.Ordinal)
            .Select(d => (Kind: d.Substring(0, d.IndexOf('|')), Entry: d.Substring(d.IndexOf('|') + 1))).ToList();
        var source = new StringBuilder("// <auto-generated/>\n#nullable enable\nnamespace IntegrationTasks.Transfer;\n\npartial class TransferTasks\n{\n");
        foreach (var (kind, baseType) in new[] { ("Client", ClientBase), ("Server", ServerBase) })
        {
            source.Append("    private static partial global::System.Collections.Generic.IEnumerable<TransferTaskBinding<global::").Append(baseType)
                .Append(">> ").Append(kind).Append("Bindings() =>\n    [\n");
            foreach (var task in tasks.Where(t => t.Kind == kind))
                source.Append(task.Entry);
            source.Append("    ];\n\n");
        }
        return source.Append("}\n").ToString();
    }
}
