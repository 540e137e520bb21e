using System.Text.Json.Serialization;

namespace IntegrationTasks.Common;

/// <summary>
/// What a run measures: a transport; the series' baseline (DirectCopy, measured against the reference as a transport is); a
/// reference the others are paired with (PipelinedCopy, PipelinedCopyRange); or the databases' own tool (the peer), ranked apart.
/// </summary>
[JsonConverter(typeof(JsonStringEnumConverter<RunKind>))]
public enum RunKind { Transport, Baseline, Reference, Peer }
