"""The TCK's messages, with the Python names of the hooks they mention (texts from the 1.0.4 jar)."""

from __future__ import annotations

import pytest

from reactive_streams.tck._reasons import python_reason


def method(name: str) -> str:
    return f"{name}()"


def attribute(name: str) -> str:
    return "factory.failed" if name == "create_failed_publisher" else f"factory.{name}"


@pytest.mark.parametrize(
    ("tck", "python"),
    [
        (
            "Skipping because no error state Publisher provided, and the test requires it. "
            "Please implement PublisherVerification#createFailedPublisher to run this test.",
            "Skipping because no error state Publisher provided, and the test requires it. "
            "Please implement create_failed_publisher() (TCK: PublisherVerification#createFailedPublisher) "
            "to run this test.",
        ),
        (
            "Skipping @Stochastic test because `skipStochasticTests()` returned `true`!",
            "Skipping @Stochastic test because skip_stochastic_tests() (TCK: `skipStochasticTests()`) "
            "returned `true`!",
        ),
        (
            "Unable to run this test, as it requires an onComplete signal, which this Publisher is unable "
            "to provide (as signalled by returning Long.MAX_VALUE from `maxElementsFromPublisher()`)",
            "Unable to run this test, as it requires an onComplete signal, which this Publisher is unable "
            "to provide (as signalled by returning Long.MAX_VALUE from max_elements_from_publisher() "
            "(TCK: `maxElementsFromPublisher()`))",
        ),
        (
            "Unable to run this test, as required elements nr: 10 is higher than supported by given "
            "producer: 3",
            "Unable to run this test, as required elements nr: 10 is higher than supported by given "
            "producer: 3 (see max_elements_from_publisher())",
        ),
        (
            "The Publisher under test only supports 1 subscribers, while this test requires at least 2 "
            "to run.",
            "The Publisher under test only supports 1 subscribers (see max_supported_subscribers()), "
            "while this test requires at least 2 to run.",
        ),
        ("Not verified by this TCK.", "Not verified by this TCK."),
    ],
)
def test_java_hooks_are_named_as_the_verification_classes_methods(tck: str, python: str) -> None:
    assert python_reason(tck, method) == python


def test_the_command_lines_factory_attributes_are_named_for_its_factory() -> None:
    tck = "Please implement PublisherVerification#createFailedPublisher to run this test."
    assert python_reason(tck, attribute) == (
        "Please implement factory.failed (TCK: PublisherVerification#createFailedPublisher) to run this test."
    )
    optional = (
        "Skipped because tested publisher does NOT implement this OPTIONAL requirement. Reason for "
        "skipping was: ... please override doesCoordinatedEmission() to return true in this "
        "IdentityProcessorVerification to allow this test to pass."
    )
    assert "override factory.does_coordinated_emission (TCK: doesCoordinatedEmission()) to return" in (
        python_reason(optional, attribute)
    )
