"""The machine passes against the correct reference model."""

from hypothesis import settings

from harness import machine_for

ModelOnly = machine_for(compare_sut=False, name="ModelOnlyMachine")
TestModelOnly = ModelOnly.TestCase
