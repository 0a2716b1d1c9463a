"""Reading what the OpenTelemetry SDK recorded, in tests."""

from __future__ import annotations

from typing import Any


def points(reader: Any, name: str) -> list[Any]:
    """The data points of the metric ``name`` that ``reader`` (the SDK's
    ``InMemoryMetricReader``, not imported here: the tests that need it skip without the
    SDK) holds; none: an empty list."""
    data = reader.get_metrics_data()
    if data is None:
        return []
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]
