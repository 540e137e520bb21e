// The layers nearly every test reads: the codes, the databases, the transfer and its measurements, the report.
global using IntegrationTasks.Common;
global using IntegrationTasks.Data;
global using IntegrationTasks.Results;
global using IntegrationTasks.Transfer;
